# d2_overlap.gp — D2 figure: fraction of a put/get hidden behind computation, vs message size.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; mpi='NAME'" X.gp
# Data: datadir/d2_overlap.dat; column 1 size (bytes), then per series a put and a get column
# (overlap_ratio, 0 = none, 1 = full overlap).
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid
set key outside right top
set title sprintf('D2: communication/computation overlap (%s, median)', mpi) . cond_line
set xlabel 'message size (bytes)'
set ylabel 'overlap ratio (0 = none, 1 = full)'
set logscale x 2
set format x '%.0b%B'
set xtics 4
set yrange [0:1.05]
plot for [i=2:ncol] datadir.'/d2_overlap.dat' using 1:i with linespoints lw 2 \
     lc i/2 dt 1+i%2 pt 7-i%2 title columnheader(i)
