# f5_lock.gp — F5 figure (paper 004 §IV-C, Figure 6a/6b): queued vs polling locks, every rank
# locks rank 0 exclusively, back to back, and puts 1-byte values: time per epoch.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_time=N" f5_lock.gp
# Data: datadir/f5_lock.time.dat; column 1 puts per epoch, then one column per lock strategy
# (vendor, polling, queued), process count and node layout.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 7in,4.5in font ',10' } \
else { set terminal pngcairo noenhanced size 900,560 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set title 'F5: queued vs polling locks (all ranks lock rank 0 exclusively; '.mpi.')' . cond_line
set grid
set key outside right
set logscale x 2
set logscale y 10
set xlabel '1-byte puts per lock epoch'
set ylabel 'µs per lock epoch (median, max across ranks)'
plot for [i=2:ncol_time] datadir.'/f5_lock.time.dat' using 1:i with linespoints lw 2 pt 7 \
    title columnheader(i)
