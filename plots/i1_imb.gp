# i1_imb.gp — I1 figure: IMB-RMA's passive-target shape at 8 bytes, one bar per MPI x series x
# window memory in each operation group (allocmem: MPI_Win_create over MPI_Alloc_mem memory).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N" i1_imb.gp
# Data: datadir/i1_imb.dat; column 1 operation and mode, then one column per MPI x series x memory.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 10in,5in font ',9' } \
else { set terminal pngcairo noenhanced size 1250,620 font ',10' }
set output out.'.'.term
set grid ytics
set key outside right top
set title 'I1: IMB-RMA shape, 8 bytes, time per operation (median)'
set ylabel 'time per operation (µs)'
set logscale y
set style data histograms
set style histogram clustered gap 1
set xtics nomirror rotate by 30 right
set style fill solid 0.8 border -1
plot for [i=2:ncol] datadir.'/i1_imb.dat' using i:xtic(1) title columnheader(i)
