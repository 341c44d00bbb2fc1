# bench/stats.sh - bench/stats.h's way of stating a figure, for the shell
# benches (sourced): the median of the runs with the smallest and largest
# beside it. The median of an even count is the mean of the middle two.

# stats_of: the numbers on stdin, one a line, as "MED MIN MAX".
stats_of() {
  sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    print m, v[1], v[NR] }'
}

# spread FMT: the same as "MED [MIN..MAX]", each printed with FMT.
spread() {
  stats_of | {
    read -r m lo hi
    printf "$1 [$1..$1]" "$m" "$lo" "$hi"
  }
}
