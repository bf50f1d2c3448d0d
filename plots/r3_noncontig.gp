# r3_noncontig.gp — R3 figure: a noncontiguous get or put toward a node peer and another node, one bar per MPI x series.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" r3_noncontig.gp
# Data: datadir/r3_noncontig.dat; column 1 pattern, direction, peer and N, then one column per MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
set grid ytics
set key outside right top
set title 'R3: noncontiguous transfer, same node vs other node (max over ranks, median)'
set ylabel 'time (µs)'
set logscale y
set style data histograms
set style histogram clustered gap 1
set xtics nomirror rotate by 60 right font ',9'
set bmargin 10
set lmargin 12
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/r3_noncontig.dat' using i:xtic(1) title columnheader(i)
