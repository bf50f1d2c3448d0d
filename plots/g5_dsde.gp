# g5_dsde.gp — G5 figure: time per dynamic sparse data exchange (lower is better), one bar per
# MPI x series per protocol, process count and k (point-to-point protocols: vendor only).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" g5_dsde.gp
# Data: datadir/g5_dsde.dat; column 1 protocol, procs, k, then one column per MPI x series.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
set grid ytics
set key outside right top
set title 'G5: dynamic sparse data exchange, 8 bytes to k random targets (median)'
set ylabel 'one exchange (µs, max over ranks)'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics nomirror rotate by 30 right
plot for [i=2:ncol] datadir.'/g5_dsde.dat' using i:xtic(1) title columnheader(i)
