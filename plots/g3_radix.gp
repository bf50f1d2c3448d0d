# g3_radix.gp — G3 figure: sorted keys per second (higher is better), one bar per
# MPI x series per process count, keys per rank and bits per digit.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" g3_radix.gp
# Data: datadir/g3_radix.dat; column 1 procs, keys, bits, then one column per MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid ytics
set key outside right top
set title 'G3: one-sided radix sort of 64-bit keys (median)' . cond_line
set ylabel 'keys sorted / s (all ranks)'
set logscale y
set style data histograms
# No empty slot before the first bar group or after the last (plot.py passes the row count).
if (exists('nrow')) { set xrange [-0.5:nrow-0.5] }
set style histogram clustered gap 1
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/g3_radix.dat' using i:xtic(1) title columnheader(i)
