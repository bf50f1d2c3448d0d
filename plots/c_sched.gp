# c_sched.gp — C1-C5 (paper 002): origin epoch per scenario and series, measured beside 002's
# model (L0 = eq. 1 with scheduling, L1 = eq. 2 without), one panel per synchronization mode.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_gats=N; ..." c_sched.gp
# Data: datadir/c_sched.MODE.dat (MODE gats, fence, lock_all; a missing mode leaves its panel out):
# column 1 "Ck series", then measured, L0, L1 (µs).
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 11in,8in font ',9' } \
else { set terminal pngcairo noenhanced size 1400,1000 font ',10' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
modes = 'gats fence lock_all'
have(m) = system('test -s '.datadir.'/c_sched.'.m.'.dat && echo 1 || echo 0') + 0
n = have('gats') + have('fence') + have('lock_all')
set multiplot layout n,1 title 'C1 Intra, C2 Inter, C3 Inter+work, C4 Mix, C5 Mix+work: origin epoch, put, no RMA to self — measured vs paper 002 model (L0 with scheduling, L1 without)' . cond_line
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set key outside right top
set ylabel 'µs (median)'
set xtics rotate by -35 scale 0
set logscale y
do for [m in modes] {
    if (have(m)) {
        set title m
        # No empty slot before the first bar group or after the last (plot.py passes the row count).
        if (exists('nrow_'.m)) { set xrange [-0.5:value('nrow_'.m)-0.5] }
        plot datadir.'/c_sched.'.m.'.dat' using 2:xtic(1) title columnheader(2), \
             '' using 3 title columnheader(3), '' using 4 title columnheader(4)
    }
}
unset multiplot
