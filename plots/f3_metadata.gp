# f3_metadata.gp — F3 figure (paper 004 §IV-B, Figure 4): window metadata per process vs P,
# measured (points) and the least-squares fit a + b*P extended to 004's scales (lines), log-log.
# Run by plot.py: gnuplot -e "datadir='DIR'; out='STEM'; term='png|pdf'; ncol=N; ncol_fit=N" f3_metadata.gp
# Data: datadir/f3_metadata.dat (column 1 P, one column per shape) and f3_metadata.fit.dat.
if (term eq 'pdf') { set terminal pdfcairo noenhanced size 8in,4.8in font ',10' } \
else { set terminal pngcairo noenhanced size 1000,600 font ',11' }
set output out.'.'.term
# The conditions of the measurement (plot.py: MPI library, QUICK, oversubscribed, load average)
cond_line = ''
if (exists('cond')) { if (strlen(cond) > 0) { cond_line = "\n".cond } }
set grid
set key outside right top
set title 'F3: window metadata per process vs P (ref on '.mpi.'; points measured, lines fitted)' . cond_line
set xlabel 'processes P'
set ylabel 'bytes per window in one process'
set logscale x 10
set logscale y 10
plot for [i=2:ncol] datadir.'/f3_metadata.dat' using 1:i with points pt 7 ps 1.5 \
        title columnheader(i), \
     for [i=2:ncol_fit] datadir.'/f3_metadata.fit.dat' using 1:i with lines lw 1 dt 2 \
        title columnheader(i)
