# f1_noncontig.gp — F1 figure (paper 004 §IV-A, Figure 3a/3b): put + flush latency vs payload,
# contiguous (left) and a vector of 1-byte blocks at stride 2 (right); one line per series and
# strategy (ref: nbrma_noncontig=blocks, one operation per block, vs packed, one message) and pair
# transport (vendor's own; shm on one node; ucx or am across virtual nodes).
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_contig=N; ncol_noncontig=M" f1_noncontig.gp
# Data: datadir/f1_noncontig.contig.dat, f1_noncontig.noncontig.dat; column 1 payload bytes.
# A panel is drawn when its ncol_ variable is set.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 10in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1300,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set multiplot layout 1, exists('ncol_contig') + exists('ncol_noncontig') \
    title 'F1: put + MPI_Win_flush, hardware-style vs active-message ('.mpi.')' . cond_line
set grid
set key top left
set logscale x 2
set logscale y 10
set format x '%.0b%B'
set xlabel 'payload (bytes)'
set ylabel 'µs per put + flush (median, max across ranks)'
if (exists('ncol_contig')) {
    set title 'contiguous'
    plot for [i=2:ncol_contig] datadir.'/f1_noncontig.contig.dat' using 1:i with linespoints \
        lw 2 pt 7 title columnheader(i)
}
if (exists('ncol_noncontig')) {
    set title 'vector of 1-byte blocks, stride 2 (both sides)'
    plot for [i=2:ncol_noncontig] datadir.'/f1_noncontig.noncontig.dat' using 1:i with \
        linespoints lw 2 pt 7 dt 1+i%2 title columnheader(i)
}
unset multiplot
