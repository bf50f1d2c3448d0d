# f2_acc.gp — F2 figure (paper 004 §IV-A, Figure 3c; Figure 1): accumulate + MPI_Win_flush_local
# message rate, one bar group per operation and element count, one bar per series and strategy
# (ref: nbrma_acc=am, one message the target applies, vs hw, 004 Fig. 1's lock, get, compute,
# put, unlock) and pair transport (vendor's own; shm on one node; ucx or am across virtual nodes).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; nrow=R" f2_acc.gp
# Data: datadir/f2_acc.dat; column 1 operation x elements, then one column per series/strategy.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 10in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1300,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set title 'F2: accumulate + MPI_Win_flush_local message rate ('.mpi.'; higher is better)' . cond_line
set grid ytics
set key below height 1
set ylabel 'million operations per second (batch / median batch time)'
set logscale y 10
set style data histograms
if (exists('nrow')) { set xrange [-0.5:nrow-0.5] }
set style histogram clustered gap 1
set xtics nomirror
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/f2_acc.dat' using i:xtic(1) title columnheader(i)
