# f4_fence.gp — F4 figure (paper 004 §IV-C, Figure 5; 003 §4): the reduce-scatter vs the barrier
# fence, a halo exchange of 8-byte puts to each ring neighbour in fence epochs: time per epoch.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_time=N" f4_fence.gp
# Data: datadir/f4_fence.time.dat; column 1 puts per neighbour per epoch, then one column per
# algorithm, process count and node layout.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 7in,4.5in font ',10' } \
else { set terminal pngcairo noenhanced size 900,560 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set title 'F4: reduce-scatter vs barrier fence (ref on '.mpi.'; puts of 8 B to each neighbour)' . cond_line
set grid
set key top left
set logscale x 2
set logscale y 10
set xlabel 'puts per neighbour per epoch'
set ylabel 'µs per epoch (median, max across ranks)'
plot for [i=2:ncol_time] datadir.'/f4_fence.time.dat' using 1:i with linespoints lw 2 pt 7 \
    title columnheader(i)
