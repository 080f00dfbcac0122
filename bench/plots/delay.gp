# stvm-bench delay: delays per second (top) and CPU microseconds per delay (bottom)
# against N, one line per case (representation). Reads the csv-wide export:
#   gnuplot -e "datafile='X.csv'; outfile='X.png'" bench/plots/delay.gp
# (stvm-bench delay --plot X.png writes X.csv and runs this.)
if (!exists("datafile")) datafile = 'delay-benchmark.csv'
if (!exists("outfile")) outfile = 'delay-benchmark.png'
set datafile separator ','
set datafile commentschars '#'

# The context lines ("# key: value") name the run in the title.
ctx(key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -1", key, datafile))
clock = ctx("clock")

# The cases in the order they first appear ("ms-smallint31 us-largeint31 ..."; stats
# sees the header line too).
cases = ' '
stats datafile using (c = strcol("case"), cases = c eq 'case' || strstrt(cases, ' '.c.' ') \
                      ? cases : cases.c.' ', 0) nooutput
stats datafile using (w = column("window_ms"), 0) nooutput

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 960,900 noenhanced
} else {
    set terminal png size 960,900 noenhanced
}
set output outfile
set multiplot layout 2,1 title sprintf('DelayBenchmark on stvm %s (%s, %s clock, window %d ms, medians)', \
    ctx("stvm_version"), ctx("stvm_backend"), clock eq 'sim' ? 'simulated' : 'real', w)
set xlabel 'concurrent delays (N processes)'
set key top left
set grid
set yrange [0:*]
# Another case's rows are NaN, which is "missing" (skipped) rather than undefined
# (which would break the line at each of them).
set datafile missing NaN
is(name) = strcol("case") eq name
set ylabel clock eq 'sim' ? 'delays per simulated second' : 'delays per second'
plot for [i = 1:words(cases)] datafile \
    using (is(word(cases, i)) ? column("concurrency") : NaN):(column("delays_per_second")) \
    with linespoints lw 2 title word(cases, i)
set ylabel 'CPU microseconds per delay'
plot for [i = 1:words(cases)] datafile \
    using (is(word(cases, i)) ? column("concurrency") : NaN):(column("cpu_us_per_delay")) \
    with linespoints lw 2 title word(cases, i)
unset multiplot
