# d6_pscw.gp — D6 figure: cost of each call of a post/start/complete/wait epoch on a ring,
# grouped bars per process count x series.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; mpi='NAME'" X.gp
# Data: datadir/d6_pscw.dat; column 1 case (procs, k neighbours, series), then post, start,
# complete, wait.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid ytics
set key outside right top
set title sprintf('D6: PSCW synchronization on a ring (%s, max over ranks, median)', mpi) . cond_line
set ylabel 'time per call (µs)'
set logscale y
set style data histograms
# No empty slot before the first bar group or after the last (plot.py passes the row count).
if (exists('nrow')) { set xrange [-0.5:nrow-0.5] }
set style histogram clustered gap 1
set xtics nomirror rotate by 30 right
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/d6_pscw.dat' using i:xtic(1) title columnheader(i)
