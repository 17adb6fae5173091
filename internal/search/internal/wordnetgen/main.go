// Command wordnetgen writes the search's table of WordNet 3.0 relations
// (internal/search/wordnet.txt) from a WordNet 3.0 database, so that the
// build and the tests need no WordNet. Run by go generate in internal/search:
//
//	go generate ./internal/search    # reads /usr/share/wordnet (Debian's wordnet-base)
//
// The table keeps the words (of the parts of speech -pos names) that are
// single words of lower-case letters, by their Snowball stem. For each word
// it keeps its most frequent senses: those WordNet has seen in use (a tagged
// sense), at most -senses of them, or the first one of a word never tagged;
// each sense is a synset; for each
// synset kept, its hypernyms (the more general synsets: "remove" for
// "delete"). Synsets are renumbered in the order they are met, and written
// in base 36.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kljensen/snowball/english"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "folder of the WordNet 3.0 database (index.noun, data.noun, ...)")
	out := flag.String("o", "wordnet.txt", "table to write")
	flag.StringVar(&parts, "pos", "verb", "parts of speech to keep, comma-separated: verb, noun")
	flag.IntVar(&maxSenses, "senses", 1, "most frequent senses kept per word and part of speech")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "wordnetgen:", err)
		os.Exit(1)
	}
}

// parts and maxSenses are what the table keeps: the search was measured
// with verbs and nouns, one to three senses (docs/search-evaluation.md), and
// kept what helped: verbs, their first sense. A word's rarer senses are
// seldom what a request means by it, and each one kept joins it to more
// words.
var (
	parts     string
	maxSenses int
)

type sense struct {
	pos    string // "n" or "v"
	offset string
}

func run(dict, out string) error {
	words := map[string][]sense{}
	hypers := map[sense][]sense{}
	for _, pos := range strings.Split(parts, ",") {
		p := pos[:1]
		if err := readIndex(filepath.Join(dict, "index."+pos), p, words); err != nil {
			return err
		}
		if err := readData(filepath.Join(dict, "data."+pos), p, hypers); err != nil {
			return err
		}
	}
	if len(words) == 0 {
		return fmt.Errorf("%s: no words read", dict)
	}
	ids := map[sense]int{}
	id := func(s sense) string {
		n, ok := ids[s]
		if !ok {
			n = len(ids)
			ids[s] = n
		}
		return strconv.FormatInt(int64(n), 36)
	}
	// The words of one stem share a line: the search looks words up by
	// their Snowball stem, the one it uses itself ("deletes", "deleting").
	stems := map[string][]sense{}
	lemmas := make([]string, 0, len(words))
	for w := range words {
		lemmas = append(lemmas, w)
	}
	sort.Strings(lemmas)
	for _, w := range lemmas {
		st := english.Stem(w, true)
		for _, s := range words[w] {
			if !slices.Contains(stems[st], s) {
				stems[st] = append(stems[st], s)
			}
		}
	}
	keys := make([]string, 0, len(stems))
	for st := range stems {
		keys = append(keys, st)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(header)
	var used []sense
	for _, st := range keys {
		b.WriteString(st)
		last := ""
		for _, s := range stems[st] {
			if s.pos != last {
				b.WriteString(" " + s.pos)
				last = s.pos
			}
			if _, ok := ids[s]; !ok {
				used = append(used, s)
			}
			b.WriteString(" " + id(s))
		}
		b.WriteByte('\n')
	}
	b.WriteString("@\n")
	for _, s := range used {
		hs := hypers[s]
		if len(hs) == 0 {
			continue
		}
		b.WriteString(id(s))
		for _, h := range hs {
			b.WriteString(" " + id(h))
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// readIndex reads an index file: lemma pos synset_cnt p_cnt [ptr_symbol...]
// sense_cnt tagsense_cnt synset_offset... (most frequent sense first).
func readIndex(file, pos string, words map[string][]sense) error {
	return eachLine(file, func(f []string) error {
		lemma := f[0]
		if !plainWord(lemma) || len(f) < 6 {
			return nil
		}
		pc, err := strconv.Atoi(f[3])
		if err != nil || len(f) < 6+pc {
			return fmt.Errorf("%s: %q: bad pointer count", file, lemma)
		}
		tagged, err := strconv.Atoi(f[5+pc])
		if err != nil {
			return fmt.Errorf("%s: %q: bad tagged sense count", file, lemma)
		}
		offsets := f[6+pc:]
		// A word never tagged in use keeps its first sense.
		n := min(max(tagged, 1), maxSenses, len(offsets))
		for _, o := range offsets[:n] {
			words[lemma] = append(words[lemma], sense{pos, o})
		}
		return nil
	})
}

// readData reads the hypernyms ("@", and "@i" for instances) of each synset
// of a data file: offset lex_filenum ss_type w_cnt (word lex_id)... p_cnt
// (pointer_symbol offset pos source/target)... | gloss.
func readData(file, pos string, hypers map[sense][]sense) error {
	return eachLine(file, func(f []string) error {
		wc, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return fmt.Errorf("%s: %s: bad word count", file, f[0])
		}
		at := 4 + 2*int(wc)
		pc, err := strconv.Atoi(f[at])
		if err != nil {
			return fmt.Errorf("%s: %s: bad pointer count", file, f[0])
		}
		for i := 0; i < pc; i++ {
			p := f[at+1+4*i:]
			if p[0] == "@" || p[0] == "@i" {
				s := sense{pos, f[0]}
				hypers[s] = append(hypers[s], sense{p[2], p[1]})
			}
		}
		return nil
	})
}

func eachLine(file string, fn func([]string) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || line == "" {
			continue // the license at the top of each file
		}
		if err := fn(strings.Fields(line)); err != nil {
			return err
		}
	}
	return sc.Err()
}

func plainWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

const header = `# WordNet 3.0 relations for the tool search, written by
# internal/search/internal/wordnetgen (go generate ./internal/search) from
# Debian's wordnet-base. Lines: a word's Snowball stem, then "v" or "n" and
# the senses of its words (most frequent first), each a synset number in base 36; after "@", a synset and
# its hypernyms. Do not edit: change the generator's flags in wordnet.go's
# go:generate line and run go generate ./internal/search.
#
# WordNet Release 3.0. This software and database is being provided to you,
# the LICENSEE, by Princeton University under the following license. By
# obtaining, using and/or copying this software and database, you agree that
# you have read, understood, and will comply with these terms and conditions.:
# Permission to use, copy, modify and distribute this software and database
# and its documentation for any purpose and without fee or royalty is hereby
# granted, provided that you agree to comply with the following copyright
# notice and statements, including the disclaimer, and that the same appear
# on ALL copies of the software, database and documentation, including
# modifications that you make for internal use or for distribution.
# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
# THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY
# MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF
# EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS
# OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR
# THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
# INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.
# The name of Princeton University or Princeton may not be used in
# advertising or publicity pertaining to distribution of the software and/or
# database. Title to copyright in this software, database and any associated
# documentation shall at all times remain with Princeton University and
# LICENSEE agrees to preserve same.
`
