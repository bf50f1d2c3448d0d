# d5_fence.gp — D5 figure: cost of one MPI_Win_fence vs number of processes,
# one line per MPI x series.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" d5_fence.gp
# Data: datadir/d5_fence.dat; column 1 procs, then one column per MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid
set key outside right top
set title 'D5: fence cost vs process count (max over ranks, median)' . cond_line
set xlabel 'processes'
set ylabel 'MPI_Win_fence (µs)'
set logscale y
stats datafile = datadir.'/d5_fence.dat' using 1 nooutput
# log2 x axis once the process counts span a factor of 16, else one tic per count
if (STATS_max >= 16 * STATS_min) { set logscale x 2 } \
else { set xtics 1; set xrange [STATS_min - 0.5:STATS_max + 0.5] }
plot for [i=2:ncol] datafile using 1:i with linespoints lw 2 pt 7 title columnheader(i)
