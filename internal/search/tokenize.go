package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// splitWords cuts text into lower-case words: at every character that is not a
// letter or a digit (so snake_case, kebab-case, dotted.names and paths come
// apart), at a lower-to-upper case change (camelCase), before the last capital
// of a run of capitals followed by a lower-case letter (HTTPServer → http,
// server) and between letters and digits (base64 → base, 64). Letters of any
// script count as letters; marks (accents written as combining characters)
// stay inside their word.
func splitWords(text string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	const (
		other = iota
		lower
		upper
		digit
	)
	class := func(r rune) int {
		switch {
		case unicode.IsUpper(r) || unicode.IsTitle(r):
			return upper
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			return lower
		case unicode.IsDigit(r):
			return digit
		}
		return other
	}
	prev := other
	for _, r := range text {
		c := class(r)
		if c == other {
			flush()
			prev = other
			continue
		}
		switch {
		case prev == lower && c == upper,
			prev == digit && c != digit,
			prev != digit && prev != other && c == digit:
			flush()
		case prev == upper && c == lower && b.Len() > 0:
			// The last capital of a run starts the next word: "HTTPServer".
			last, size := utf8.DecodeLastRuneInString(b.String())
			if size < b.Len() {
				s := b.String()[:b.Len()-size]
				b.Reset()
				words = append(words, s)
				b.WriteRune(last)
			}
		}
		b.WriteRune(unicode.ToLower(r))
		prev = c
	}
	flush()
	return words
}

// stopWords are words that say nothing about which tool is wanted: English
// function words and the filler of a request ("I need a tool to ...").
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor of to in on at by for with from into onto
	as is are was were be been being am do does did doing done have has had having
	i me my mine myself we us our ours you your yours he him his she her it its they them their
	this that these those there here which who whom whose what when where why how
	can could would should will shall may might must
	if then than so such too very just also only not no yes
	please need needs want wants wanted like let lets let's help tool tools use using used
	some any each every all both either neither few more most other own same
	about above after again against below between during before over under until while
	up down out off once further via per etc e.g i.e
	s t d ll m re ve`) {
		m[w] = true
	}
	return m
}()

// stem reduces an English word to its stem; words that are not plain ASCII
// letters (other scripts, numbers) are kept as they are.
func stem(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	return english.Stem(w, true)
}

// terms turns text into the index's terms: words split as [splitWords] does,
// stop words dropped, the rest stemmed, then the concepts of [concepts] that
// the words or pairs of neighbouring words name ("log in", "pull request")
// appended. The first n terms are the words; the rest are concepts.
func terms(text string) (t []string, n int) {
	words := splitWords(text)
	out := make([]string, 0, len(words)+len(words)/2)
	stems := make([]string, len(words))
	for i, w := range words {
		if stopWords[w] {
			stems[i] = w
			continue
		}
		stems[i] = stem(w)
		out = append(out, stems[i])
	}
	return appendConcepts(out, stems), len(out)
}
