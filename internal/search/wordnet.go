package search

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

//go:generate go run ./internal/wordnetgen -dict /usr/share/wordnet -pos verb -senses 1 -o wordnet.txt

// wordnetText is the table of WordNet 3.0 relations that wordnetgen writes:
// each noun's and verb's most frequent senses (synsets) and each synset's
// hypernyms. Compiled in: the build needs no WordNet.
//
//go:embed wordnet.txt
var wordnetText string

// A wordnetEntry is what WordNet says of one stem: its senses and their
// hypernyms, each as a term no word can produce ("#1k3").
type wordnetEntry struct {
	senses, hypernyms []string
}

// wordnet maps a stem to its entry, built once from wordnetText when the
// first index or request needs it. The words of a stem ("delete",
// "deleting") share its entry.
var wordnet = sync.OnceValue(loadWordnet)

func loadWordnet() map[string]wordnetEntry {
	text := wordnetText
	words, hyperText, _ := strings.Cut(text, "\n@\n")
	hypers := make(map[string][]string, strings.Count(hyperText, "\n"))
	for line := range strings.Lines(hyperText) {
		f := strings.Fields(line)
		if len(f) > 1 {
			hypers[f[0]] = f[1:]
		}
	}
	m := make(map[string]wordnetEntry, strings.Count(words, "\n"))
	for line := range strings.Lines(words) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		s := f[0] // the stem, as stem() makes it (wordnetgen uses the same stemmer)
		e := m[s]
		for _, id := range f[1:] {
			if id == "v" || id == "n" {
				continue
			}
			t := "#" + id
			if !slices.Contains(e.senses, t) {
				e.senses = append(e.senses, t)
			}
			for _, h := range hypers[id] {
				if t := "#" + h; !slices.Contains(e.hypernyms, t) {
					e.hypernyms = append(e.hypernyms, t)
				}
			}
		}
		m[s] = e
	}
	return m
}

// useWordnet reports whether the WordNet relations of a stem are added to
// its terms: a stop word's are not, nor, unless wordnetWithConcepts, those of
// a word the hand-written thesaurus knows (its concepts say it better).
func useWordnet(s string) bool {
	if wordnetWeight == 0 || stopWords()[s] {
		return false
	}
	return wordnetWithConcepts || len(concepts()[s]) == 0
}
