# stvm-bench delay: delays per second against N on each clock the run used, the seed's
# figures (Pharo 2015) drawn as marks, and per delay on the simulated clock the modelled
# cost (--sim-cost) or, without a model, the CPU microseconds (the representation's own
# cost, with no OS sleep in it). Reads the csv-wide export:
#   gnuplot -e "datafile='X.csv'; outfile='X.png'" bench/plots/delay.gp
# (stvm-bench delay --plot X.png writes X.csv and runs this.)
if (!exists("datafile")) datafile = 'delay-benchmark.csv'
if (!exists("outfile")) outfile = 'delay-benchmark.png'
set datafile separator ','
set datafile commentschars '#'

# The context lines ("# key: value") name the run in the title.
ctx(key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -1", key, datafile))

# The cases in the order they first appear ("ms-smallint31 us-largeint31 ..."; stats
# sees the header line too), and how many rows each clock has.
cases = ' '
stats datafile using (c = strcol("case"), cases = c eq 'case' || strstrt(cases, ' '.c.' ') \
                      ? cases : cases.c.' ', 0) nooutput
nsim = 0
nreal = 0
stats datafile using (nsim = nsim + (strcol("clock") eq 'sim'), \
                      nreal = nreal + (strcol("clock") eq 'real'), 0) nooutput
stats datafile using (w = column("window_ms"), 0) nooutput

# Pharo 2015's DelayBenchmark (the seed): N, withNewCodeEnabled: false (ms), true (µs),
# comma-separated like the data file.
$seed << EOD
1000,39498,39018
2000,77808,71906
3000,99889,98010
4000,117632,101227
5000,128507,64728
6000,118729,90495
7000,114437,89220
8000,114792,89585
9000,115137,88393
10000,113973,89073
EOD

panels = (nsim > 0) * 2 + (nreal > 0)
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1000,(380 * panels + 60) noenhanced
} else {
    set terminal png size 1000,(380 * panels + 60) noenhanced
}
set output outfile
set multiplot layout panels,1 title sprintf("DelayBenchmark: boxed µs timestamps (us-largeint31) cost throughput, 61-bit SmallIntegers (us-smallint61) do not\nstvm %s (%s), window %d ms, medians; marks: Pharo 2015 on a 32-bit VM (the seed)", \
    ctx("stvm_version"), ctx("stvm_backend"), w)
set xlabel 'concurrent delays N (worker processes, log scale)'
set key outside right top
set grid
set yrange [0:*]
set format y '%.0f'
# Another case's rows are NaN, which is "missing" (skipped) rather than undefined
# (which would break the line at each of them).
set datafile missing NaN
is(name, clk) = strcol("case") eq name && strcol("clock") eq clk
set logscale x
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0

if (nsim > 0) {
    set title 'Simulated clock with the modelled cost per operation (--sim-cost): stvm beside the seed'
    set ylabel 'delays per simulated second [1/s]'
    plot for [i = 1:words(cases)] datafile \
        using (is(word(cases, i), 'sim') ? column("concurrency") : NaN):(column("delays_per_second")) \
        with linespoints lw 2 title word(cases, i), \
        $seed using 1:2 with points pt 5 ps 1.5 lc rgb 'black' title 'seed: ms (old code)', \
        $seed using 1:3 with points pt 9 ps 1.5 lc rgb 'red' title 'seed: µs (new code)'
}
if (nreal > 0) {
    set title "This machine's real clock, to saturation: stvm beside the seed"
    set ylabel 'delays per second [1/s]'
    plot for [i = 1:words(cases)] datafile \
        using (is(word(cases, i), 'real') ? column("concurrency") : NaN):(column("delays_per_second")) \
        with linespoints lw 2 title word(cases, i), \
        $seed using 1:2 with points pt 5 ps 1.5 lc rgb 'black' title 'seed: ms (old code)', \
        $seed using 1:3 with points pt 9 ps 1.5 lc rgb 'red' title 'seed: µs (new code)'
}
# The bottom panel: what the model charges each representation per delay (--sim-cost),
# else the CPU per delay on the simulated clock (no OS sleep in it). With a model the
# CPU figure is not shown: it includes the charging's own switches and spins.
ncost = 0
stats datafile using (ncost = ncost + (strcol("clock") eq 'sim' && \
                                       strcol("sim_cost_us_per_delay") ne ''), 0) nooutput
if (nsim > 0 && ncost > 0) {
    set title 'Modelled cost per delay (--sim-cost): boxing is what us-largeint31 pays more'
    set ylabel 'modelled cost per delay [µs]'
    set format y '%.1f'
    plot for [i = 1:words(cases)] datafile \
        using (is(word(cases, i), 'sim') ? column("concurrency") : NaN):(column("sim_cost_us_per_delay")) \
        with linespoints lw 2 title word(cases, i), \
        1e6 / 128507 with lines dt 2 lw 2 lc rgb 'black' title 'seed: 7.78 µs (ms, 1e6 / its peak)', \
        1e6 / 101227 with lines dt 2 lw 2 lc rgb 'red' title 'seed: 9.88 µs (µs, 1e6 / its peak)'
}
if (nsim > 0 && ncost == 0) {
    set title 'CPU per delay on the simulated clock: the representation alone, no OS sleep in it'
    set ylabel 'CPU microseconds per delay [µs]'
    set format y '%.2f'
    plot for [i = 1:words(cases)] datafile \
        using (is(word(cases, i), 'sim') ? column("concurrency") : NaN):(column("cpu_us_per_delay")) \
        with linespoints lw 2 title word(cases, i)
}
unset multiplot
