package search

import (
	"sort"
	"strings"
)

// maxNameRunes bounds the runes of a name that Closest compares, so that its
// quadratic edit distance stays cheap whatever a caller or server sends.
const maxNameRunes = 128

// Closest returns up to n of names closest to name (for "unknown tool; did you
// mean ..."), best first, by a case-insensitive edit distance with token
// overlap; empty when nothing is reasonably close.
//
// A name is close when a few edits turn one into the other (at most a third
// of the longer name's characters, and at least one edit is always allowed),
// or when at least half of the words of the one with fewer words are in the
// other (words split and stemmed as the search does: "read_files" and
// "readFile" share both; "navigate" is in "browser_navigate_back"). Among close
// names, the fewer edits and the larger the share of all their words in
// common, the better; equal ones keep the order of names. Duplicates in names are returned once.
func Closest(name string, names []string, n int) []string {
	if n <= 0 || len(names) == 0 {
		return nil
	}
	lname := []rune(strings.ToLower(name))
	if len(lname) > maxNameRunes {
		lname = lname[:maxNameRunes]
	}
	words := wordSet(name)
	type cand struct {
		name  string
		score float64
		index int
	}
	var cands []cand
	seen := map[string]bool{}
	for i, c := range names {
		if seen[c] {
			continue
		}
		seen[c] = true
		lc := []rune(strings.ToLower(c))
		if len(lc) > maxNameRunes {
			lc = lc[:maxNameRunes]
		}
		longer := max(len(lname), len(lc))
		if longer == 0 {
			continue
		}
		d := editDistance(lname, lc)
		editSim := 1 - float64(d)/float64(longer)
		cw := wordSet(c)
		shared := sharedWords(words, cw)
		if d > max(1, longer/3) && 2*shared < min(len(words), len(cw)) || shared == 0 && d > max(1, longer/3) {
			continue
		}
		jaccard := float64(shared) / float64(max(len(words)+len(cw)-shared, 1))
		cands = append(cands, cand{c, editSim + jaccard, i})
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	if len(cands) > n {
		cands = cands[:n]
	}
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.name
	}
	return out
}

// wordSet is the set of stemmed words of an identifier.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range splitWords(s) {
		m[stem(w)] = true
	}
	return m
}

// sharedWords is the number of words in both a and b.
func sharedWords(a, b map[string]bool) int {
	common := 0
	for w := range a {
		if b[w] {
			common++
		}
	}
	return common
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
