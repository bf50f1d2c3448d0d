# a5_early_fence.gp — A5 figure (paper 000 §VIII-A, Figs. 2-11 style): median µs of the measured
# quantities, one bar per series (vendor, ref, ref-nb) in each group.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; mpi='NAME'" X.gp
# Data: datadir/a5_early_fence.dat; column 1 quantity (and size), then one column per bar.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
set grid ytics
set key outside right top
set title sprintf('A5: Early Fence — fence epoch + subsequent work at the target (%s, median)', mpi)
set ylabel 'cumulative time at target (µs)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set xtics nomirror rotate by 20 right
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/a5_early_fence.dat' using i:xtic(1) title columnheader(i)
