# g2_lu.gp — G2 figure: LU factorization time (left, lower is better) and the share of it spent
# inside MPI (right), one bar per MPI x series per synchronization (gats, fence), procs and m.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_time=N; ncol_share=N" g2_lu.gp
# Data: datadir/g2_lu.time.dat, g2_lu.share.dat; column 1 sync, procs, m, then one column per
# MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 11in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1400,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set multiplot layout 1,2 title 'G2: LU decomposition, pivot rows broadcast one-sidedly (median)' . cond_line
set grid ytics
set key below
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
set title 'factorization time'
set ylabel 'µs (max over ranks)'
set logscale y
# No empty slot before the first bar group or after the last (plot.py passes the row count).
if (exists('nrow_time')) { set xrange [-0.5:nrow_time-0.5] }
plot for [i=2:ncol_time] datadir.'/g2_lu.time.dat' using i:xtic(1) title columnheader(i)
unset logscale y
set title 'share of the time inside MPI calls'
set ylabel 'mpi_us / lu_us'
set yrange [0:1.05]
if (exists('nrow_share')) { set xrange [-0.5:nrow_share-0.5] }
plot for [i=2:ncol_share] datadir.'/g2_lu.share.dat' using i:xtic(1) title columnheader(i)
unset multiplot
