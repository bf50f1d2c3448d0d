# b2_aaar_lock.gp — B2 figure (paper 000 §VIII-A, Figs. 2-11 style): median µs of the measured
# quantities, one bar per flag off / on in each group.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; mpi='NAME'" X.gp
# Data: datadir/b2_aaar_lock.dat; column 1 quantity (and size), then one column per bar.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
set grid ytics
set key outside right top
set title sprintf('B2: A_A_A_R (lock) — out-of-order lock epochs, ref-nb (%s, median)', mpi)
set ylabel 'latency (µs)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set xtics nomirror rotate by 20 right
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/b2_aaar_lock.dat' using i:xtic(1) title columnheader(i)
