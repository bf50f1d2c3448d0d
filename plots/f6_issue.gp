# f6_issue.gp — F6 figure (paper 004 §IV-D, Figures 7-8): eager vs delayed issuing, all-to-all in
# fence epochs. Left: time per epoch; right: operation-object bytes held at once (the
# MPIX_Win_get_stats gauge, maximum across ranks; eager holds none: no point on the log scale).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_time=N; ncol_mem=N" f6_issue.gp
# Data: datadir/f6_issue.time.dat and f6_issue.mem.dat; column 1 puts per target per epoch, then
# one column per strategy and process count.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 10in,4.5in font ',10' } \
else { set terminal pngcairo noenhanced size 1300,560 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set multiplot layout 1,2 title 'F6: eager vs delayed issuing (ref on '.mpi.'; all-to-all puts of 8 B, fence epochs)' . cond_line
set grid
set key top left
set logscale x 2
set logscale y 10
set xlabel 'puts per target per epoch'
set ylabel 'µs per epoch (median, max across ranks)'
set title 'time'
plot for [i=2:ncol_time] datadir.'/f6_issue.time.dat' using 1:i with linespoints lw 2 pt 7 \
    title columnheader(i)
set ylabel 'bytes of operation objects held at once'
set title 'memory (operation objects, high-water)'
plot for [i=2:ncol_mem] datadir.'/f6_issue.mem.dat' using 1:(column(i) > 0 ? column(i) : NaN) \
    with linespoints lw 2 pt 7 title columnheader(i)
unset multiplot
