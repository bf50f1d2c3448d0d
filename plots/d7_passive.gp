# d7_passive.gp — D7 figure: passive target synchronization costs (lock epochs, flush, sync),
# one bar per MPI x series in each group.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" d7_passive.gp
# Data: datadir/d7_passive.dat; column 1 case, then one column per MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid ytics
set key outside right top
set title 'D7: passive target synchronization (median)' . cond_line
set ylabel 'time (µs)'
set logscale y
set style data histograms
# No empty slot before the first bar group or after the last (plot.py passes the row count).
if (exists('nrow')) { set xrange [-0.5:nrow-0.5] }
set style histogram clustered gap 1
set xtics nomirror rotate by 30 right
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/d7_passive.dat' using i:xtic(1) title columnheader(i)
