package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// splitWords cuts text into lower-case words: at every character that is not a
// letter or a digit (so snake_case, kebab-case, dotted.names and paths come
// apart), at a lower-to-upper case change (camelCase), before the last capital
// of a run of capitals followed by a lower-case letter (HTTPServer → http,
// server) and between letters and digits (base64 → base, 64). A run cut at
// case changes or digits is also kept whole after its parts (GitHub → git,
// hub, github), so that a request that writes it as one word finds it.
// Letters of any script count as letters; marks (accents written as
// combining characters) stay inside their word.
func splitWords(text string) []string {
	var words []string
	start := 0 // the first word of the current run of letters and digits
	var run strings.Builder
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	// Two words joined by a hyphen are also kept as one word, after their
	// parts, when the thesaurus knows that word ("e-mail", "pop-up",
	// "re-run", "sub-issue", "drop-down"): such words are written both ways.
	var segs []string // the runs of the current hyphenated compound
	hyphen := false   // the last character was a hyphen after a run
	endCompound := func() {
		if len(segs) == 2 && len(concepts()[stem(segs[0]+segs[1])]) > 0 {
			words = append(words, segs[0]+segs[1])
			start = len(words)
		}
		segs = segs[:0]
	}
	endRun := func() {
		flush()
		if run.Len() > 0 {
			segs = append(segs, run.String())
		}
		switch {
		case numeronym(run.String()):
			// "k8s", "a11y", "i18n": one word, whose parts mean nothing.
			words = append(words[:start], run.String())
		case len(words)-start > 1:
			words = append(words, run.String())
		}
		run.Reset()
		start = len(words)
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
			endRun()
			if r == '-' && prev != other {
				hyphen = true
			} else {
				endCompound()
				hyphen = false
			}
			prev = other
			continue
		}
		if prev == other {
			if !hyphen {
				endCompound()
			}
			hyphen = false
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
		lr := unicode.ToLower(r)
		b.WriteRune(lr)
		run.WriteRune(lr)
		prev = c
	}
	endRun()
	endCompound()
	return words
}

// numeronym reports whether w is a letter, a number and a letter: an
// abbreviation that counts the letters left out ("k8s", "a11y", "i18n",
// "e2e").
func numeronym(w string) bool {
	if len(w) < 3 || w[0] < 'a' || w[0] > 'z' || w[len(w)-1] < 'a' || w[len(w)-1] > 'z' {
		return false
	}
	for i := 1; i < len(w)-1; i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// stopWords are words that say nothing about which tool is wanted: English
// function words and the filler of a request ("I need a tool to ...").
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but nor of to in on at by for with from into onto
	as is are was were be been being am do does did doing done have has had having
	i me my mine myself we us our ours you your yours he him his she her it its they them their
	this that these those there here which who whom whose what when where why how
	can could would should will shall may might must
	if then than so such too very just also only not no yes
	please need needs want wants wanted like let lets let's help tool tools use using used
	some any each every all both either neither few more most other own same
	everything anything something nothing everyone anyone someone
	about above after again against below between during before over under until while
	up down out off once further via per etc e.g i.e
	s t d ll m re ve
	don doesn didn isn aren wasn weren won wouldn shouldn couldn hasn haven hadn`) {
		m[w] = true
	}
	return m
})

// abbreviations are short forms written for the same word in tools and
// requests alike; each is read as its full form before stemming.
var abbreviations = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"repo": "repository", "repos": "repositories",
		"db": "database", "dbs": "databases",
		"dir": "directory", "dirs": "directories",
		"msg": "message", "msgs": "messages",
		"k8s": "kubernetes",
		"env": "environment", "envs": "environments",
		"info":   "information",
		"prod":   "production",
		"config": "configuration", "configs": "configurations",
		"auth": "authentication",
		"org":  "organization", "orgs": "organizations",
		"pic": "picture", "pics": "pictures",
		"img": "image", "imgs": "images",
		"doc": "document", "docs": "documentation",
		"a11y": "accessibility",
		"i18n": "internationalization",
		"l10n": "localization",
		"o11y": "observability",
		"js":   "javascript",
		"py":   "python",
		"kube": "kubernetes",
		"pg":   "postgres", "postgresql": "postgres",
		"gh":  "github",
		"gql": "graphql",
		"dep": "dependency", "deps": "dependencies",
		"pkg": "package", "pkgs": "packages",
		"lib": "library", "libs": "libraries",
		"perf": "performance",
		"cred": "credential", "creds": "credentials",
		"param": "parameter", "params": "parameters",
		"arg": "argument", "args": "arguments",
		"cmd": "command", "cmds": "commands",
		"fn": "function", "func": "function", "funcs": "functions",
		"svc": "service", "svcs": "services",
		"cfg":  "configuration",
		"vuln": "vulnerability", "vulns": "vulnerabilities",
		"notif": "notification", "notifs": "notifications",
		"perm": "permission", "perms": "permissions",
		"addr": "address",
		"cert": "certificate", "certs": "certificates",
		"desc": "description",
		"acct": "account",
		"mgmt": "management",
		"yml":  "yaml",
		"jpg":  "jpeg",
		"ado":  "devops", // Azure DevOps
	}
})

// stem reduces an English word to its stem; words that are not plain ASCII
// letters (other scripts, numbers) are kept as they are, but for Latin
// letters with accents, which are read without them first ("café" is
// "cafe", "naïve" "naive").
func stem(w string) string {
	w = americanSpelling(foldAccents(w))
	if full, ok := abbreviations()[w]; ok {
		w = full
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	if s, ok := stemExceptions()[w]; ok {
		return s
	}
	return english.Stem(w, true)
}

// foldAccents returns w with its accented Latin letters written without
// their accents and combining marks dropped, when that leaves plain ASCII
// letters; otherwise (other scripts, digits) w as it is.
func foldAccents(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	var b strings.Builder
	b.Grow(len(w))
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r):
		default:
			f, ok := latinFolds()[r]
			if !ok {
				return w
			}
			b.WriteString(f)
		}
	}
	return b.String()
}

// latinFolds are the lower-case Latin letters with accents (Latin-1 and
// Latin Extended-A) and what they are read as.
var latinFolds = sync.OnceValue(func() map[rune]string {
	m := map[rune]string{}
	for _, pair := range strings.Fields(`àa áa âa ãa äa åa āa ăa ąa æae çc ćc ĉc ċc čc ďd đd ðd
	èe ée êe ëe ēe ĕe ėe ęe ěe ĝg ğg ġg ģg ĥh ħh ìi íi îi ïi ĩi īi ĭi įi ıi ĵj ķk ĺl ļl ľl ŀl łl
	ñn ńn ņn ňn òo óo ôo õo öo øo ōo ŏo őo œoe ŕr ŗr řr śs ŝs şs šs ßss ţt ťt ŧt þth
	ùu úu ûu üu ũu ūu ŭu ůu űu ųu ŵw ýy ÿy ŷy źz żz žz`) {
		r, size := utf8.DecodeRuneInString(pair)
		m[r] = pair[size:]
	}
	return m
})

// americanSpelling returns the American spelling of a British one, which
// the stemmer does not join ("organisation" is "organis", "organization"
// "organ"): words ending in -ise, -ised, -ising, -isation ... but for those
// that are spelt so in America too ("advise", "promise", "exercise"), and
// a list of others (colour, favourite, licence, catalogue ...).
func americanSpelling(w string) string {
	if us, ok := britishWords()[w]; ok {
		return us
	}
	for _, suf := range britishSuffixes {
		base, ok := strings.CutSuffix(w, suf)
		if !ok || len(base) < 3 {
			continue
		}
		for _, e := range iseEndings {
			if strings.HasSuffix(base+"ise", e) {
				return w
			}
		}
		return base + strings.Replace(suf, "is", "iz", 1)
	}
	return w
}

var britishSuffixes = []string{"isations", "isation", "ise", "ises", "ised", "ising", "iser", "isers"}

// iseEndings end the words spelt with -ise in America too ("exercise",
// "advise", "surprise", "otherwise", "fundraise").
var iseEndings = strings.Fields(`advertise arise bruise chastise cise compromise cruise demise
	despise disguise expertise franchise guise merchandise noise paradise poise praise premise prise
	promise raise sunrise treatise vise wise`)

// britishWords are British spellings that no suffix rule finds.
var britishWords = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"colour": "color", "colours": "colors", "coloured": "colored",
		"favourite": "favorite", "favourites": "favorites", "favour": "favor",
		"behaviour": "behavior", "behaviours": "behaviors",
		"licence": "license", "licences": "licenses",
		"catalogue": "catalog", "catalogues": "catalogs",
		"dialogue": "dialog", "dialogues": "dialogs",
		"analyse": "analyze", "analysed": "analyzed", "analysing": "analyzing",
		"centre": "center", "centres": "centers",
		"artefact": "artifact", "artefacts": "artifacts",
		"cancelled": "canceled", "cancelling": "canceling",
		"labelled": "labeled", "labelling": "labeling",
		"modelling": "modeling", "travelling": "traveling",
		"programme": "program", "programmes": "programs",
		"honour": "honor", "labour": "labor", "neighbour": "neighbor", "flavour": "flavor",
	}
})

// stemCache remembers the stems of words; a nil one remembers nothing.
type stemCache map[string]string

func (c stemCache) stem(w string) string {
	if c == nil {
		return stem(w)
	}
	s, ok := c[w]
	if !ok {
		s = stem(w)
		c[w] = s
	}
	return s
}

// stemExceptions keep apart words the stemmer would join although tools use
// them for different things.
var stemExceptions = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"production":    "production", // not "product" (a shop's products)
		"productions":   "production",
		"locate":        "locate", // not "location" (places on a map)
		"locates":       "locate",
		"located":       "locate",
		"locating":      "locate",
		"setting":       "setting", // not "set" (to set something)
		"settings":      "setting",
		"performance":   "performance", // not "perform" (to do something)
		"publication":   "publication", // not "public" (public repositories)
		"publications":  "publication",
		"terminal":      "terminal",   // not "terminate" (a job's terminal state)
		"goods":         "goods",      // not "good"
		"directions":    "directions", // not "direct", "directly"
		"heading":       "heading",    // not "head" (a pull request's head)
		"headings":      "heading",
		"sampling":      "sampling", // not "sample" (an example)
		"paste":         "paste",    // not "past" (the past week)
		"pasted":        "paste",
		"pasting":       "paste",
		"activate":      "activate", // not "active", "activity" (activity logs)
		"activated":     "activate",
		"activates":     "activate",
		"relational":    "relational", // not "relate", "related" (related papers)
		"promotion":     "promotion",  // not "promote" (to production)
		"promotions":    "promotion",
		"structured":    "structured",    // not "structure" (a folder's)
		"accessibility": "accessibility", // not "access" (permissions, tokens)
		"accessible":    "accessibility",
		"copies":        "copies", // not "copi" alone: also replicas ("run three copies")
	}
})

// terms turns text into the index's terms: words split as [splitWords] does,
// stop words dropped, the rest stemmed, then the concepts of [concepts] that
// the words or pairs of neighbouring words name ("log in", "pull request")
// appended. The first n terms are the words; the rest are concepts.
func terms(text string) (t []string, n int) {
	return termsWith(text, nil)
}

// termsWith is [terms] with a cache of stems (nil for none): an index's
// tools share most of their words, and stemming is most of its cost.
func termsWith(text string, cache stemCache) (t []string, n int) {
	words := splitWords(plainURLs(text))
	out := make([]string, 0, len(words)+len(words)/2)
	stems := make([]string, len(words))
	for i, w := range words {
		if stopWords()[w] {
			stems[i] = w
			continue
		}
		stems[i] = cache.stem(w)
		out = append(out, stems[i])
	}
	return appendConcepts(out, stems), len(out)
}

// plainURLs drops quoted text (see [dropQuoted]), then replaces each web
// address in text by the word "url", each path
// (words joined by "/") by "path" and each file name with a common extension
// by "file": the words inside them (a host, folders, a file's name) say
// nothing about which tool is wanted, and what they are says a lot.
func plainURLs(text string) string {
	text = dropQuoted(text)
	if !strings.ContainsAny(text, "/.") {
		return text
	}
	fields := strings.Fields(text)
	for i, f := range fields {
		f = strings.Trim(f, "\"'`()[]{}<>,;:!?")
		switch {
		case strings.Contains(f, "://") || strings.HasPrefix(f, "www.") || hostName(f):
			fields[i] = "url"
		case ownerName(f):
			// "acme/app": a repository, a branch, a folder; nothing to go by.
			fields[i] = ""
		case strings.Count(f, "/") > 0 && len(f) > 1:
			fields[i] = "path"
		case libraryName(f):
			// "Next.js", "Vue.js": a library, named with its language.
			fields[i] = strings.ReplaceAll(f, ".", " ")
		case fileName(f):
			fields[i] = "file"
		case versionNumber(f):
			fields[i] = "version"
		}
	}
	return strings.Join(fields, " ")
}

// dropQuoted removes the text inside quotes ('Saved', "Load more", `x`,
// “y”): in a request it is data (a label to click, a text to wait for, a
// line to replace), not a word about the tool wanted; in a tool's
// description it is an example or another tool's name. A quote opens at the
// start of a word and closes at the end of one, so apostrophes ("what's",
// "Bob's") are left alone.
func dropQuoted(text string) string {
	if !strings.ContainsAny(text, "'\"`“‘") {
		return text
	}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	var b strings.Builder
	b.Grow(len(text))
	prev := ' '
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if closer, ok := quotePairs[r]; ok && !isWord(prev) {
			// The closing quote that ends a word.
			end := -1
			for j := i + size; j < len(text); {
				c, n := utf8.DecodeRuneInString(text[j:])
				if c == closer && j > i+size {
					next, _ := utf8.DecodeRuneInString(text[j+n:])
					if j+n == len(text) || !isWord(next) {
						end = j + n
						break
					}
				}
				j += n
			}
			if end > 0 {
				b.WriteByte(' ')
				i, prev = end, ' '
				continue
			}
		}
		b.WriteString(text[i : i+size])
		prev = r
		i += size
	}
	return b.String()
}

var quotePairs = map[rune]rune{'\'': '\'', '"': '"', '`': '`', '“': '”', '‘': '’'}

// ownerName reports whether s is two names joined by one slash, as a
// repository ("acme/app") or a branch ("feature/login") is written.
func ownerName(s string) bool {
	a, b, ok := strings.Cut(s, "/")
	if !ok || a == "" || b == "" || strings.Contains(b, "/") {
		return false
	}
	for _, r := range s {
		if r != '/' && r != '-' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// versionNumber reports whether s is a dotted version number: "v2.3.0",
// "1.2".
func versionNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.TrimFunc(p, unicode.IsDigit) != "" {
			return false
		}
	}
	return true
}

// hostName reports whether s looks like a web host: dotted words ending in a
// common top-level domain ("example.com", "docs.python.org").
func hostName(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 || strings.ContainsAny(s, "@ ") {
		return false
	}
	return topLevelDomains()[strings.ToLower(s[dot+1:])]
}

var topLevelDomains = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, d := range strings.Fields("com org net io dev app ai co edu gov info biz me tv uk de fr nl eu us ca jp cn ru in au") {
		m[d] = true
	}
	return m
})

// libraryName reports whether s is a capitalised name ending in ".js", as
// JavaScript libraries are written ("Node.js", "Three.js"); a file's name
// seldom starts with a capital.
func libraryName(s string) bool {
	base, ok := strings.CutSuffix(strings.ToLower(s), ".js")
	if !ok || base == "" || strings.ContainsAny(base, "./\\") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// fileName reports whether s ends in the extension of a common kind of file.
func fileName(s string) bool {
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 || dot == len(s)-1 {
		return false
	}
	return fileExtensions()[strings.ToLower(s[dot+1:])]
}

var fileExtensions = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(`txt md markdown json yaml yml toml ini cfg conf csv tsv xml html htm css
	js mjs cjs ts tsx jsx go py rb rs java kt c h cpp hpp cs php sh bash zsh ps1 sql
	pdf png jpg jpeg gif svg webp ico mp3 mp4 wav zip gz tar tgz log lock mod sum env`) {
		m[e] = true
	}
	return m
})

// queryConcepts are the concepts of stop words that name one in a request
// ("who is on the team": people), though not in a tool's description, where
// they are everywhere ("use this when ...").
var queryConcepts = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"who":   {"~user"},
		"whom":  {"~user"},
		"which": {"~list"},
		"where": {"~search"},
		"when":  {"~time"},
		"until": {"~wait"},
	}
})

// A query term and its weight in the request. Slot is the word of the
// request it stands for (the first one of a phrase); a request's words are
// its slots, which a tool fills by matching any term of the word.
type queryTerm struct {
	term   string
	weight float64
	slot   int
}

// queryTerms are the terms of a request with their weights. They are those of
// [terms], except that a pair of words that names a concept ("log in", "look
// up", "merge request") stands for its concept, at full weight, and not for
// its words, which on their own would find other things ("log" finds logs),
// unless the pair is two nouns ("work item", "pull request"), whose words
// count as themselves beside the concept.
func queryTerms(query string) []queryTerm {
	var out []queryTerm
	slots := 0
	for i, clause := range clauses(query) {
		w := 1.0
		if i > 0 {
			w = laterStepWeight
		}
		ts, n := clauseTerms(clause)
		for _, t := range ts {
			out = append(out, queryTerm{t.term, t.weight * w, slots + t.slot})
		}
		slots += n
	}
	return out
}

// clauses cuts a request into its steps, in the order they are done: at
// the words that chain steps ("and then", "then", "so", "so that", "in
// order to", "before", ";"), and it puts first a step that the request says
// comes first although written later ("deploy it, but first run the tests",
// "deploy after running the tests", "after running the tests, deploy").
// The first step is what the request needs first, the later ones what it is
// for.
func clauses(query string) []string {
	fields := strings.Fields(query)
	type step struct {
		from, to int
		first    bool // said to come first
	}
	var steps []step
	start, first := 0, false
	lower := func(i int) string {
		if i < 0 || i >= len(fields) {
			return ""
		}
		return strings.ToLower(strings.Trim(fields[i], ",.!?:"))
	}
	comma := func(i int) bool { return i >= 0 && strings.HasSuffix(fields[i], ",") }
	for i, f := range fields {
		lf := lower(i)
		cut, nextFirst := -1, false // the field at which the next clause starts
		switch {
		case strings.HasSuffix(f, ";") || strings.HasSuffix(f, "."):
			cut = i + 1
		case comma(i) && first && start == 0:
			// "after running the tests, deploy": the step said first ends
			// at its comma.
			cut = i + 1
		case lf == "then" && i > 0 && lower(i-1) == "and":
			// Cut already at "and".
		case lf == "then" || lf == "so" || lf == "before" || lf == "afterwards":
			cut = i
		case lf == "and" && lower(i+1) == "then":
			cut = i
		case lf == "in" && lower(i+1) == "order" && lower(i+2) == "to":
			cut = i
		case lf == "after" && strings.HasSuffix(lower(i+1), "ing"):
			// "after running the tests": a step, not a time ("after I hit
			// save").
			if i == 0 {
				first = true
			} else {
				cut, nextFirst = i, true
			}
		case lf == "first" && i > 0 && (lower(i-1) == "but" || comma(i-1) || strings.HasSuffix(fields[i-1], ";")):
			cut, nextFirst = i, true
			if lower(i-1) == "but" {
				cut = i - 1
			}
		}
		if cut > start && cut < len(fields) {
			steps = append(steps, step{start, cut, first})
			start, first = cut, nextFirst
		} else if nextFirst {
			first = true
		}
	}
	steps = append(steps, step{start, len(fields), first})
	// The steps said to come first, then the others, each in the order
	// written.
	out := make([]string, 0, len(steps))
	for _, want := range []bool{true, false} {
		for _, s := range steps {
			if s.first == want {
				out = append(out, strings.Join(fields[s.from:s.to], " "))
			}
		}
	}
	return out
}

// clauseTerms returns the terms of one clause and its number of words.
func clauseTerms(query string) ([]queryTerm, int) {
	words := splitWords(plainURLs(query))
	stems := make([]string, len(words))
	for i, w := range words {
		if stopWords()[w] {
			stems[i] = w
		} else {
			stems[i] = stem(w)
		}
	}
	var out []queryTerm
	covered := make([]bool, len(words))
	for _, p := range conceptPairs(stems) {
		for _, t := range p.concepts {
			out = append(out, queryTerm{t, 1, p.first})
		}
		if p.whole && !stopWords()[stems[p.first]] && !stopWords()[stems[p.second]] &&
			!actionStems()[stems[p.first]] && !actionStems()[stems[p.second]] {
			// Two nouns ("work item", "payment link", "stack trace"):
			// their words say which of the concept's tools, so they count
			// too, as themselves, in the phrase's slot.
			out = append(out, queryTerm{stems[p.first], 1, p.first}, queryTerm{stems[p.second], 1, p.first})
		}
		covered[p.first] = true
		if p.whole {
			covered[p.second] = true
		}
	}
	for i, s := range stems {
		if covered[i] {
			continue
		}
		if stopWords()[words[i]] {
			// A few question words say what is asked for ("who": people).
			for _, t := range queryConcepts()[words[i]] {
				out = append(out, queryTerm{t, conceptWeight, i})
			}
			continue
		}
		w := 1.0
		if actionStems()[s] {
			w = actionWeight
		}
		out = append(out, queryTerm{s, w, i})
		for _, t := range concepts()[s] {
			out = append(out, queryTerm{t, w * conceptWeight, i})
		}
		for _, t := range firstSteps()[s] {
			out = append(out, queryTerm{t, w * firstStepWeight, i})
		}
		if useWordnet(s) {
			e := wordnet()[s]
			for _, t := range e.senses {
				out = append(out, queryTerm{t, w * wordnetWeight, i})
			}
			for _, t := range e.hypernyms {
				out = append(out, queryTerm{t, w * wordnetHyperWeight, i})
			}
		}
	}
	return out, len(words)
}

// What a request asks for: a change, to see something, or it does not say.
const (
	intentUnknown = iota
	intentChange
	intentRead
	// A task of several steps ("fix ...", "upgrade ..."), whose first step
	// is to look at what is there.
	intentTask
)

// changeActions and readActions are the concepts of verbs that ask for a
// change and for seeing something; the others (click, navigate, wait ...) say
// neither.
var (
	changeActions = map[string]bool{"~delete": true, "~create": true, "~update": true, "~write": true,
		"~move": true, "~stop": true, "~send": true, "~merge": true, "~upload": true, "~assign": true,
		"~deploy": true, "~scale": true, "~undo": true, "~refund": true, "~install": true, "~resolve": true, "~toggle": true}
	readActions = map[string]bool{"~read": true, "~list": true, "~search": true, "~compare": true,
		"~summarize": true, "~analyze": true, "~explain": true}
	taskVerbs = func() map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(`fix fixes refactor implement upgrade migrate port investigate debug
		troubleshoot triage diagnose figure understand plan prepare personalise personalize onboard audit
		reproduce optimize optimise improve clean cleanup tidy harden`) {
			m[stem(w)] = true
		}
		return m
	}()
	questionWords = map[string]bool{"what": true, "which": true, "who": true, "whom": true, "how": true,
		"where": true, "when": true, "is": true, "are": true, "does": true, "do": true, "did": true,
		"has": true, "have": true, "was": true, "were": true}
)

// requestIntent reads a request's first step for whether it asks for a change
// or to see something: a question asks to see; otherwise its first verb says,
// when all of the verb's concepts agree.
func requestIntent(query string) int {
	words := splitWords(plainURLs(clauses(query)[0]))
	if len(words) == 0 {
		return intentUnknown
	}
	if questionWords[words[0]] {
		return intentRead
	}
	for _, w := range words {
		if stopWords()[w] {
			continue
		}
		s := stem(w)
		if taskVerbs[s] {
			return intentTask
		}
		if !actionStems()[s] {
			continue
		}
		change, read, other := 0, 0, 0
		for _, c := range concepts()[s] {
			switch {
			case changeActions[c]:
				change++
			case readActions[c]:
				read++
			default:
				other++
			}
		}
		switch {
		case change > 0 && read == 0:
			return intentChange
		case read > 0 && change == 0:
			return intentRead
		}
		return intentUnknown
	}
	return intentUnknown
}
