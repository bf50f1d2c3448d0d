# g5_dsde.gp — G5 figure: time per dynamic sparse data exchange (lower is better), one bar per
# MPI x series per protocol, process count and k (point-to-point protocols: vendor only).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" g5_dsde.gp
# Data: datadir/g5_dsde.dat; column 1 protocol, procs, k, then one column per MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid ytics
set key outside right top
set title 'G5: dynamic sparse data exchange, 8 bytes to k random targets (median)' . cond_line
set ylabel 'one exchange (µs, max over ranks)'
set logscale y
set style data histograms
# No empty slot before the first bar group or after the last (plot.py passes the row count).
if (exists('nrow')) { set xrange [-0.5:nrow-0.5] }
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
plot for [i=2:ncol] datadir.'/g5_dsde.dat' using i:xtic(1) title columnheader(i)
