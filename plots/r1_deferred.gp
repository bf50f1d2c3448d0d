# r1_deferred.gp — R1 figure: cost per deferred epoch vs the number of queued epochs K
# (flat = the engine's work per call does not grow with the queue).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" r1_deferred.gp
# Data: datadir/r1_deferred.dat; column 1 K, then queue, drain and total per MPI.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid
set key outside right top
set title 'R1: cost per deferred epoch vs epochs queued (ref-nb, median)' . cond_line
set xlabel 'deferred epochs queued (K)'
set ylabel 'µs per epoch'
set logscale x 10
set logscale y
plot for [i=2:ncol] datadir.'/r1_deferred.dat' using 1:i with linespoints lw 2 pt 7 \
    title columnheader(i)
