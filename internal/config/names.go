package config

import "strings"

// nearMiss returns the known key that an unknown key was most likely meant
// to be, or "". A near miss is a misspelling that would silently change
// what the workbench does (toolFilter offers every tool, disable starts a
// server that was meant to be off), so it is an error, while other unknown
// keys stay warnings: hosts add keys of their own.
//
// The rules, small on purpose: the same key but for case, "_" and "-"
// (ToolFilters, tool_filters); singular for plural (toolFilter, maxRetry);
// or one letter added, dropped, changed or two swapped (comand, disable,
// descripton), two for keys of 8 letters or more.
func nearMiss(key string, known map[string]string) string {
	k := normalizeKey(key)
	if len(k) < 3 {
		return ""
	}
	best, bestDist := "", 3
	for name := range known {
		n := normalizeKey(name)
		switch {
		case k == n, k+"s" == n, k+"es" == n, k == n+"s", strings.TrimSuffix(k, "y")+"ies" == n:
			return name
		case len(k) < 4 || len(n) < 4:
			continue
		}
		limit := 1
		if min(len(k), len(n)) >= 8 {
			limit = 2
		}
		if d := editDistance(k, n); d <= limit && (d < bestDist || d == bestDist && name < best) {
			best, bestDist = name, d
		}
	}
	return best
}

func normalizeKey(key string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
}

// editDistance counts the single-letter insertions, deletions, changes and
// swaps of neighbours that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
