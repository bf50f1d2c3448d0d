# d4_atomics.gp — D4 figure: atomics. Left: accumulate SUM/MIN latency vs size (colour = MPI x
# series, dash = op); right: fetch_and_op and compare_and_swap, one bar per MPI x series.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_acc=N; ncol_rmw=M" ...
# Data: datadir/d4_atomics.acc.dat (size, then a SUM and a MIN column per MPI x series) and
# d4_atomics.rmw.dat; a panel is drawn when its ncol_ variable is set.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 10in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1250,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set multiplot layout 1, exists('ncol_acc') + exists('ncol_rmw') \
    title 'D4: atomic operations + MPI_Win_flush (median)' . cond_line
set grid
set key below height 1
if (exists('ncol_acc')) {
    set title 'accumulate on 8-byte integers'
    set xlabel 'message size (bytes)'
    set ylabel 'latency (µs)'
    set logscale x 2
    set logscale y
    set format x '%.0b%B'
    set xtics 4
    plot for [i=2:ncol_acc] datadir.'/d4_atomics.acc.dat' using 1:i with linespoints lw 2 \
         lc i/2 dt 1+i%2 pt 7-i%2 title columnheader(i)
}
if (exists('ncol_rmw')) {
    reset
    set grid ytics
    set key below height 1
    set title 'single 8-byte element'
    set ylabel 'latency (µs)'
    set yrange [0:*]
    set style data histograms
    # No empty slot before the first bar group or after the last (plot.py passes the row count).
    if (exists('nrow_rmw')) { set xrange [-0.5:nrow_rmw-0.5] }
    set style histogram clustered gap 1
    set xtics nomirror
    set style fill solid 0.8 border -1
    plot for [i=2:ncol_rmw] datadir.'/d4_atomics.rmw.dat' using i:xtic(1) title columnheader(i)
}
unset multiplot
