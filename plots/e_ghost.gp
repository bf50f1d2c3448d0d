# e_ghost.gp — E figure (paper 003 §5, tables 1-2): ghost-area exchange, time of the one-sided
# version over the time of the same exchange with isend/irecv, vs bytes per neighbour.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol_p2=N; ...; mpi='NAME'"
# Data: datadir/e_ghost.pP.dat per rank count P (2 and 4 by default); column 1 size, then per
# series the fence, pscw and lock columns: colour follows the series, dash and point the version.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid
set key outside right top
set xlabel 'bytes per neighbour'
set ylabel 'one-sided / point-to-point time'
set logscale x 2
set logscale y
set format x '%.0b%B'
set xtics 16
procs = ''
if (exists('ncol_p2')) { procs = procs.' 2' }
if (exists('ncol_p4')) { procs = procs.' 4' }
set multiplot layout 1, words(procs) title 'E: ghost-area exchange, one-sided over point-to-point time' . cond_line
first = 1
do for [w in procs] {
    f = datadir.'/e_ghost.p'.w.'.dat'
    n = value('ncol_p'.w)
    set title sprintf('E: ghost exchange, %s ranks (%s, median)', w, mpi)
    # one legend for all panels (the columns are the same): on the first panel only
    if (first) { set key outside right top } else { unset key }
    first = 0
    plot for [i=2:n] f using 1:i with linespoints lw 2 lc 1+(i-2)/3 dt 1+(i-2)%3 pt 5+(i-2)%3 \
         title columnheader(i), 1 with lines lc rgb 'black' dt 3 notitle
}
unset multiplot
