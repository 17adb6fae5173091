package search

import (
	_ "embed"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ./internal/wordnetgen -dict /usr/share/wordnet -pos verb,noun -senses 2 -noun-senses 2 -hyper-depth 2 -members -o wordnet.txt

// wordnetText is the table of WordNet 3.0 relations that wordnetgen writes:
// each noun's and verb's most frequent senses (synsets) and each synset's
// hypernyms. Compiled in: the build needs no WordNet.
//
//go:embed wordnet.txt
var wordnetText string

// A wordnetEntry is what WordNet says of one stem as a verb: its senses and
// their hypernyms, each as a term no word can produce ("#1k3").
type wordnetEntry struct {
	senses, hypernyms []string
}

// wordnet maps a stem to its entry as a verb, built once from wordnetText
// when the first index or request needs it. The words of a stem ("delete",
// "deleting") share its entry.
var wordnet = sync.OnceValue(loadWordnet)

func loadWordnet() map[string]wordnetEntry {
	words, hyperText, _ := strings.Cut(wordnetText, "\n@\n")
	hyperText, _, _ = strings.Cut(hyperText, "\n=\n")
	hypers := make(map[string][]string)
	m := make(map[string]wordnetEntry)
	// The verbs' synsets first, then their hypernyms.
	for line := range strings.Lines(words) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || !slices.Contains(f, "v") {
			continue // a noun's line: read by the lexicon only
		}
		e := m[f[0]] // the stem, as stem() makes it (wordnetgen uses the same stemmer)
		verb := false
		for _, id := range f[1:] {
			if id == "v" || id == "n" {
				verb = id == "v"
				continue
			}
			if t := "#" + id; verb && !slices.Contains(e.senses, t) {
				e.senses = append(e.senses, t)
				hypers[id] = nil
			}
		}
		m[f[0]] = e
	}
	for line := range strings.Lines(hyperText) {
		f := strings.Fields(line)
		if _, ok := hypers[f[0]]; ok && len(f) > 1 {
			hypers[f[0]] = f[1:]
		}
	}
	for s, e := range m {
		for _, t := range e.senses {
			for _, h := range hypers[t[1:]] {
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
	if wordnetWeight == 0 || stopWords[s] {
		return false
	}
	return wordnetWithConcepts || len(concepts[s]) == 0
}

// A wordnetLexicon finds the lines of the table without copying it: the
// start of each word's line (the lines are sorted by stem), and of each
// synset's hypernyms and words, by the synset's number.
type wordnetLexicon struct {
	words          []int32
	hyper, members []int32 // -1: none
}

var lexicon = sync.OnceValue(loadLexicon)

func loadLexicon() wordnetLexicon {
	var lx wordnetLexicon
	text := wordnetText
	section := 0 // 0 words, 1 hypernyms, 2 members
	for at := 0; at < len(text); {
		end := strings.IndexByte(text[at:], '\n')
		if end < 0 {
			end = len(text) - at
		}
		line := text[at : at+end]
		switch {
		case line == "@":
			section = 1
		case line == "=":
			section = 2
		case line == "" || line[0] == '#':
		case section == 0:
			lx.words = append(lx.words, int32(at))
		default:
			id, _, _ := strings.Cut(line, " ")
			n, err := strconv.ParseInt(id, 36, 32)
			if err == nil {
				list := &lx.hyper
				if section == 2 {
					list = &lx.members
				}
				for len(*list) <= int(n) {
					*list = append(*list, -1)
				}
				(*list)[n] = int32(at)
			}
		}
		at += end + 1
	}
	return lx
}

// line is the fields of the table's line that starts at at.
func lineAt(at int32) []string {
	line := wordnetText[at:]
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return strings.Fields(line)
}

// synsetLine is the fields after a synset's number on its line in list.
func synsetLine(list []int32, id string) []string {
	n, err := strconv.ParseInt(id, 36, 32)
	if err != nil || int(n) >= len(list) || list[n] < 0 {
		return nil
	}
	return lineAt(list[n])[1:]
}

// senses are the synsets of a stem's verbs and nouns, as the table has them.
func (lx wordnetLexicon) senses(s string) []string {
	i := sort.Search(len(lx.words), func(i int) bool {
		line := wordnetText[lx.words[i]:]
		stem, _, _ := strings.Cut(line, " ")
		return stem >= s
	})
	if i == len(lx.words) {
		return nil
	}
	f := lineAt(lx.words[i])
	if f[0] != s {
		return nil
	}
	var out []string
	for _, id := range f[1:] {
		if id != "v" && id != "n" {
			out = append(out, id)
		}
	}
	return out
}

// A related word of a stem, by WordNet: a word of one of its senses
// (level 0), of a hypernym of one (1), or of a hypernym's hypernym (2).
type related struct {
	stem  string
	level int
}

// relatedWords are the words WordNet relates to stem s, each once, at its
// lowest level; s itself is not among them.
func relatedWords(s string) []related {
	lx := lexicon()
	level := lx.senses(s)
	seen := map[string]bool{s: true}
	visited := map[string]bool{}
	var out []related
	for depth := 0; depth <= 2 && len(level) > 0; depth++ {
		var next []string
		for _, id := range level {
			if visited[id] {
				continue
			}
			visited[id] = true
			for _, m := range synsetLine(lx.members, id) {
				if !seen[m] {
					seen[m] = true
					out = append(out, related{m, depth})
				}
			}
			next = append(next, synsetLine(lx.hyper, id)...)
		}
		level = next
	}
	return out
}
