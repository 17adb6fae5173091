// Package search ranks the tools of every toolbox against a free-text request,
// for open_toolbox's query.
//
// The base is BM25F over a tool's fields (the nouns of its name, the verbs of
// its name, the first sentence of its description, the rest of it, its
// parameters' names and descriptions, its toolbox's and server's names and
// descriptions), each weighted and length-normalised on its own. Text is cut
// into words at punctuation, case changes and digits (tokenize.go), stemmed
// (Snowball English), and joined by a small hand-written thesaurus of the words
// agents and tools use for the same things (concepts.go): both a tool's words
// and a request's get the concepts of their words and phrases as extra terms.
//
// A request is read for what its parts are: web addresses, paths, file names,
// version numbers and quoted text stand for their kind, not their words; a
// phrase ("log in", "open a ticket") for its concept; question words for what
// they ask ("who": people); the words of later steps ("... and then ...") weigh
// less. On top of the BM25F sum, a tool's score grows with the share of the
// request's words it matches, with how well its server as a whole matches
// (a second BM25 index over each server's tool names), and when the request
// names its toolbox or server, and with the share of its name's words the
// request says; a request for a change puts tools that say they only read
// (readOnlyHint, or for a tool that does not say, its name's verbs) lower, and a task of several steps ("fix ...") puts them
// higher, as its first step is to look; a request to see something puts
// tools that say they change things a little lower, and one that does not
// say to delete puts tools whose names delete lower; a word the index does
// not know stands for the terms that share its first letters; a tool heavier than 4 KB must match
// better. The knobs were tuned on testdata/search/queries-dev.json and
// queries-heldout.json. Everything it needs is compiled in; nothing is read or
// fetched at run time.
package search

import (
	"encoding/json"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// Doc is one tool offered to the search.
type Doc struct {
	Toolbox            string
	ToolboxDescription string // may be empty
	Server             string
	ServerDescription  string          // may be empty (e.g. the server's instructions or title)
	Tool               json.RawMessage // the tool object exactly as the server listed it
}

// Hit is one tool found: Doc indexes the docs given to [NewIndex].
type Hit struct {
	Doc   int
	Score float64
}

// The fields of a tool.
const (
	fieldName       = iota // the tool's name and titles, but for their verbs
	fieldNameVerb          // the verbs of the name and titles ("get", "list")
	fieldSummary           // the description's first sentence
	fieldBody              // the rest of the description
	fieldParamNames        // parameter names (and enum values)
	fieldParamDesc         // parameter descriptions
	fieldServer            // toolbox and server names
	fieldServerDesc        // toolbox and server descriptions
	numFields
)

// The ranking's knobs, tuned on testdata/search/queries-dev.json and
// queries-heldout.json, as values good on both rather than best on either
// (make search-eval prints what they give). They are variables only so that a
// tuning test can vary them; nothing changes them at run time.
var (
	// fieldWeights are BM25F's weight and length normalisation (b) per
	// field. A word in a tool's name says most about it; its description's
	// first sentence says what it is for; the rest of the description and
	// the parameters' descriptions are long and often about details, so they
	// weigh less and are normalised by their length, so that a long schema
	// does not make its tool match every request. The server's name and
	// description lift all of its tools alike.
	fieldWeights = [numFields]struct{ weight, b float64 }{
		fieldName:       {3.0, 0.3},
		fieldNameVerb:   {1.5, 0.3},
		fieldSummary:    {2.0, 0.5},
		fieldBody:       {0.6, 0.75},
		fieldParamNames: {0.8, 0.5},
		fieldParamDesc:  {0.25, 0.75},
		fieldServer:     {1.0, 0.2},
		fieldServerDesc: {0.5, 0.5},
	}
	// actionWeight is for a verb of [actionGroups] in a request: "get",
	// "find", "list" are in the names of most servers' tools.
	actionWeight = 1.2
	// conceptWeight is for a concept of a request's word, against the
	// word's own weight.
	conceptWeight = 1.0
	// synonymStack is the share of a word's other matching terms (its
	// concepts) that adds to its best one.
	synonymStack = 0.25
	// laterStepWeight is for the words of a request's later steps.
	laterStepWeight = 0.6
	// coordPower: a tool's score is multiplied by the share of the
	// request's words (those the index knows) that it matches, to this
	// power, so that one rare word does not outrank a tool that matches the
	// whole request.
	coordPower = 0.5
	// serverBoost: a tool's score is multiplied by 1 + serverBoost × its
	// server's score over the best server's, in the server-level index.
	serverBoost = 1.0
	// serverB is the length normalisation of a server's document, and
	// serverDocFields the fields of its tools that make it (their names
	// but for the verbs: what the server is about).
	serverB         = 0.5
	serverDocFields = []int{fieldName}
	// mentionBoost: a tool's score is multiplied by 1 + mentionBoost when
	// the request names its toolbox or server ("on GitHub", "in Notion").
	mentionBoost = 1.0
	// A tool whose definition is longer than heavyTool bytes costs a
	// host's context a lot each time it is offered, so it must match better
	// than a lighter tool to be offered before it: its score is multiplied
	// by (heavyTool/size)^heavyPenalty.
	heavyTool    = 4 << 10
	heavyPenalty = 0.5
	// A request that asks for a change ("delete ...", "add ...") is seldom
	// served by a tool that says it only reads (its readOnlyHint): such a
	// tool's score is multiplied by 1 - changePenalty. Tools that do not
	// say are left alone, and so are tools that say they change things:
	// many that only look say so too (a browser's navigate, a scrape).
	changePenalty = 0.2
	// A request for a task of several steps ("fix ...", "upgrade ...")
	// starts by looking: a read-only tool's score is multiplied by
	// 1 + taskBoost.
	taskBoost = 0.6
	// nameCover: a tool's score is multiplied by 1 + nameCover × the share
	// of the words of its name (but for its server's) that the request has,
	// as a word or a concept: a request that says all of a name ("list the
	// issues") wants that tool more than one whose long description matches.
	nameCover = 1.0
	// A tool whose name says it deletes ("delete_entities", "uninstall")
	// is what a request wants only when the request says so too: a request
	// to add, remember or look at something, which matches a deleting
	// tool by its nouns, has its score multiplied by 1 - deletePenalty.
	deletePenalty = 0.5
	// A request that asks to see something ("what ...", "show ...") is
	// seldom served by a tool that says it changes things (readOnlyHint
	// false): its score is multiplied by 1 - readPenalty.
	readPenalty = 0.1
	// A word of a request that the index does not know, nor any of its
	// concepts, stands for the index's terms that start with its first
	// prefixLen letters, at prefixWeight: a spelling or a form the stemmer
	// does not join ("personalise", "person").
	prefixLen    = 5
	prefixWeight = 0.5
	// WordNet (wordnet.go): a verb's most frequent sense and its hypernyms
	// are terms of the verb, in tools and requests alike, so that a
	// request's verb meets a tool's synonym ("purge", "delete") or the more
	// general verb ("delete", "remove"). In a request they weigh
	// wordnetWeight and wordnetHyperWeight of the word. Verbs that
	// concepts.go knows keep only its concepts. Chosen by cross-validation
	// over the tuning sets (docs/search-evaluation.md).
	wordnetWeight       = 0.4
	wordnetHyperWeight  = 0.15
	wordnetDocHypernyms = true
	wordnetWithConcepts = false
	// firstStepWeight is for the concepts of a task's first step
	// (firstStepGroups) against the word that names the task.
	firstStepWeight = 0.5
)

const (
	// deleteConcept is the concept of the verbs of deleting.
	deleteConcept = "~delete"
	k1            = 1.2
	// serverFieldWeight is the weight of a server's own names and
	// descriptions in its document.
	serverFieldWeight = 3
	// Bounds on what of a tool's input schema is read.
	maxProperties  = 64
	maxSchemaDepth = 4
	maxParamDesc   = 300 // bytes of each parameter's description
	// maxQuery bounds the bytes of a request that are read.
	maxQuery = 4 << 10
)

// Index is the search's index over a set of tools. It is immutable after
// [NewIndex] and safe for concurrent use.
type Index struct {
	n     int
	toolT table // over the tools
	// sizeFactor scales down the score of a tool whose definition is
	// heavy for a host's context (see heavyTool).
	sizeFactor []float64
	// readOnly is each tool's readOnlyHint: 1 true, -1 false, 0 unsaid
	// (and not to be read from its name's verbs, see verbsReadOnly).
	readOnly []int8
	// deletes tells the tools whose name has a verb of deleting.
	deletes []bool
	// nameWords are the words of each tool's name, each as the terms
	// (its stem and concepts) any of which matches it.
	nameWords [][][]string
	// The servers (toolbox and server pairs): each doc's server, and a
	// BM25 index over each server's tools taken together.
	server   []int32
	nServers int
	serverT  table // over the servers
	// named maps a word of a toolbox's or server's name to the servers
	// that have it, for a request that names where it wants to look.
	named map[string][]int32
}

// table is a BM25 table of terms and their postings (the documents that hold
// each term, with its saturated frequency there) and idf: one over the
// tools, one over the servers.
type table struct {
	terms    map[string]int32
	idf      []float64
	postings [][]posting
}

// add posts doc's term frequencies, already scaled for its length, in the
// terms' order, so that every posting list stays in document order
// whatever the map's order.
func (b *table) add(doc int, tf map[string]float64) {
	if b.terms == nil {
		b.terms = map[string]int32{}
	}
	for _, t := range slices.Sorted(maps.Keys(tf)) {
		id, ok := b.terms[t]
		if !ok {
			id = int32(len(b.postings))
			b.terms[t] = id
			b.postings = append(b.postings, nil)
		}
		v := tf[t]
		b.postings[id] = append(b.postings[id], posting{int32(doc), float32(v / (k1 + v))})
	}
}

// finish sets each term's idf over n documents.
func (b *table) finish(n int) {
	b.idf = make([]float64, len(b.postings))
	for id, p := range b.postings {
		df := float64(len(p))
		b.idf[id] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
}

type posting struct {
	doc int32
	// sat is the term's saturated BM25F frequency in the doc, tf/(k1+tf),
	// which does not depend on the request.
	sat float32
}

// NewIndex indexes docs. A tool object that does not parse, or parses only in
// part, is indexed by what can be read of it (at worst its toolbox and server).
func NewIndex(docs []Doc) *Index {
	ix := &Index{n: len(docs), sizeFactor: make([]float64, len(docs)), readOnly: make([]int8, len(docs)), deletes: make([]bool, len(docs)), nameWords: make([][][]string, len(docs))}
	for d, doc := range docs {
		ix.sizeFactor[d] = 1
		if n := len(doc.Tool); n > heavyTool {
			ix.sizeFactor[d] = math.Pow(float64(heavyTool)/float64(n), heavyPenalty)
		}
	}
	type fieldTerms struct {
		terms []string
		words int // the words among terms (the rest are concepts), its length
	}
	all := make([][numFields]fieldTerms, len(docs))
	var totalLen [numFields]float64
	cache := stemCache{}
	for d, doc := range docs {
		texts, ro := docFields(doc, cache)
		if ro == 0 {
			ro = verbsReadOnly(texts[fieldNameVerb], cache)
		}
		ix.readOnly[d] = ro
		ix.nameWords[d] = nameWords(doc, cache)
		for _, w := range ix.nameWords[d] {
			if slices.Contains(w, deleteConcept) {
				ix.deletes[d] = true
			}
		}
		for f, text := range texts {
			t, n := termsWith(text, cache)
			all[d][f] = fieldTerms{t, n}
			totalLen[f] += float64(n)
		}
	}
	var avgLen [numFields]float64
	for f := range avgLen {
		avgLen[f] = math.Max(totalLen[f]/math.Max(float64(len(docs)), 1), 1)
	}
	tf := map[string]float64{}
	for d := range all {
		clear(tf)
		for f := range all[d] {
			ft := all[d][f]
			p := fieldWeights[f]
			norm := 1 - p.b + p.b*float64(ft.words)/avgLen[f]
			for _, t := range ft.terms {
				tf[t] += p.weight / norm
			}
		}
		ix.toolT.add(d, tf)
	}
	ix.toolT.finish(ix.n)
	ix.indexServers(docs, func(d, f int) []string { return all[d][f].terms })
	return ix
}

// indexServers builds the server-level index: a server's document is the
// names of all its tools (but for their verbs) and its own names and
// descriptions, so that a request about pods finds the Kubernetes server even
// through a tool that does not say "pod".
func (ix *Index) indexServers(docs []Doc, fieldTerms func(doc, field int) []string) {
	ids := map[[2]string]int32{}
	ix.server = make([]int32, len(docs))
	ix.named = map[string][]int32{}
	var tfs []map[string]float64
	var lens []float64
	for d, doc := range docs {
		key := [2]string{doc.Toolbox, doc.Server}
		sid, ok := ids[key]
		if !ok {
			sid = int32(len(tfs))
			ids[key] = sid
			tfs = append(tfs, map[string]float64{})
			lens = append(lens, 0)
			for _, f := range []int{fieldServer, fieldServerDesc} {
				for _, t := range fieldTerms(d, f) {
					tfs[sid][t] += serverFieldWeight
				}
			}
		}
		ix.server[d] = sid
		if !ok {
			for _, w := range splitWords(doc.Toolbox + " " + doc.Server) {
				if stopWords()[w] || actionStems()[stem(w)] || len(w) < 3 {
					continue
				}
				t := stem(w)
				if !slices.Contains(ix.named[t], sid) {
					ix.named[t] = append(ix.named[t], sid)
				}
			}
		}
		for _, f := range serverDocFields {
			for _, t := range fieldTerms(d, f) {
				tfs[sid][t]++
				lens[sid]++
			}
		}
	}
	ix.nServers = len(tfs)
	total := 0.0
	for _, l := range lens {
		total += l
	}
	avg := math.Max(total/math.Max(float64(len(lens)), 1), 1)
	for sid, tf := range tfs {
		norm := 1 - serverB + serverB*lens[sid]/avg
		for t := range tf {
			tf[t] /= norm
		}
		ix.serverT.add(sid, tf)
	}
	ix.serverT.finish(ix.nServers)
}

// Search returns the tools that match query, best first, at most limit of
// them (all of them when limit <= 0). A tool matches when it shares a word or
// a concept with the request; equal scores are ordered as the docs were given.
func (ix *Index) Search(query string, limit int) []Hit {
	if len(query) > maxQuery {
		// A request says what it needs in its first few hundred words.
		query = query[:maxQuery]
	}
	q := queryTerms(query)
	if len(q) == 0 || ix.n == 0 {
		return nil
	}
	q = append(q, ix.nearTerms(q)...)
	// The request's terms known to the index, each once with its largest
	// weight, in index order, so that scores are summed in the same order at
	// every search.
	type qterm struct {
		id   int32
		w    float64
		mask uint64 // the slots of the request the term stands for
	}
	known := make([]qterm, 0, len(q))
	for _, t := range q {
		if id, ok := ix.toolT.terms[t.term]; ok {
			known = append(known, qterm{id, t.weight, 1 << (t.slot % 64)})
		}
	}
	if len(known) == 0 {
		return nil
	}
	sort.Slice(known, func(i, j int) bool {
		if known[i].id != known[j].id {
			return known[i].id < known[j].id
		}
		return known[i].w > known[j].w
	})
	// One entry per term: the largest weight, every slot.
	uniq := known[:1]
	for _, qt := range known[1:] {
		last := &uniq[len(uniq)-1]
		if qt.id == last.id {
			last.mask |= qt.mask
			continue
		}
		uniq = append(uniq, qt)
	}
	var allSlots uint64
	for _, qt := range uniq {
		allSlots |= qt.mask
	}
	// A word's terms (the word and its concepts) fill one slot: a tool
	// scores the best of them and a share (synonymStack) of the rest, so
	// that a word with many concepts does not outweigh the other words.
	// A term that stands for several words counts once, in the first.
	sort.SliceStable(uniq, func(i, j int) bool {
		return bits.TrailingZeros64(uniq[i].mask) < bits.TrailingZeros64(uniq[j].mask)
	})
	scores := make([]float64, ix.n)
	filled := make([]uint64, ix.n)
	best := make([]float64, ix.n)
	sum := make([]float64, ix.n)
	var touched []int32
	for i := 0; i < len(uniq); {
		slot := bits.TrailingZeros64(uniq[i].mask)
		j := i
		for ; j < len(uniq) && bits.TrailingZeros64(uniq[j].mask) == slot; j++ {
			qt := uniq[j]
			qw := qt.w * ix.toolT.idf[qt.id]
			for _, p := range ix.toolT.postings[qt.id] {
				c := qw * float64(p.sat)
				if sum[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				sum[p.doc] += c
				best[p.doc] = math.Max(best[p.doc], c)
				filled[p.doc] |= qt.mask
			}
		}
		for _, d := range touched {
			scores[d] += best[d] + synonymStack*(sum[d]-best[d])
			best[d], sum[d] = 0, 0
		}
		touched = touched[:0]
		i = j
	}
	if coordPower > 0 {
		total := float64(bits.OnesCount64(allSlots))
		for d, s := range scores {
			if s > 0 {
				scores[d] = s * math.Pow(float64(bits.OnesCount64(filled[d]))/total, coordPower)
			}
		}
	}
	if serverBoost > 0 && ix.nServers > 1 {
		sscores := make([]float64, ix.nServers)
		for _, t := range q {
			id, ok := ix.serverT.terms[t.term]
			if !ok {
				continue
			}
			for _, p := range ix.serverT.postings[id] {
				sscores[p.doc] += t.weight * ix.serverT.idf[id] * float64(p.sat)
			}
		}
		best := 0.0
		for _, s := range sscores {
			best = math.Max(best, s)
		}
		if best > 0 {
			for d, s := range scores {
				if s > 0 {
					scores[d] = s * (1 + serverBoost*sscores[ix.server[d]]/best)
				}
			}
		}
	}
	if mentionBoost > 0 {
		var named []int32
		for _, t := range q {
			if !strings.HasPrefix(t.term, "~") {
				for _, sid := range ix.named[t.term] {
					if !slices.Contains(named, sid) {
						named = append(named, sid)
					}
				}
			}
		}
		// A word that names every server tells none apart.
		if len(named) > 0 && len(named) < ix.nServers {
			for d, s := range scores {
				if s > 0 && slices.Contains(named, ix.server[d]) {
					scores[d] = s * (1 + mentionBoost)
				}
			}
		}
	}
	intent := requestIntent(query)
	qset := make(map[string]bool, len(q))
	for _, t := range q {
		qset[t.term] = true
	}
	wantsDelete := qset[deleteConcept]
	var hits []Hit
	for d, s := range scores {
		if s > 0 {
			s *= ix.sizeFactor[d]
			switch {
			case intent == intentChange && ix.readOnly[d] == 1:
				s *= 1 - changePenalty
			case intent == intentTask && ix.readOnly[d] == 1:
				s *= 1 + taskBoost
			case intent == intentRead && ix.readOnly[d] == -1:
				s *= 1 - readPenalty
			}
			if ix.deletes[d] && !wantsDelete {
				s *= 1 - deletePenalty
			}
			hits = append(hits, Hit{d, s})
		}
	}
	// The share of a tool's name the request says lifts its score at most
	// 1 + nameCover times: a tool whose score cannot reach the limit-th
	// best even so is left out before that share is counted, and before
	// the sort (what is left is the same; at many tools, much faster).
	if limit > 0 && len(hits) > limit && nameCover > 0 {
		kth := kthLargest(hits, limit)
		kept := hits[:0]
		for _, h := range hits {
			if h.Score*(1+nameCover) >= kth {
				kept = append(kept, h)
			}
		}
		hits = kept
	}
	if nameCover > 0 {
		for i, h := range hits {
			if words := ix.nameWords[h.Doc]; len(words) > 0 {
				hits[i].Score *= 1 + nameCover*float64(coveredWords(words, qset))/float64(len(words))
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// kthLargest is the k-th largest score of hits (k <= len(hits)).
func kthLargest(hits []Hit, k int) float64 {
	top := make([]float64, 0, k) // the k largest so far, smallest first
	for _, h := range hits {
		i, _ := slices.BinarySearch(top, h.Score)
		if len(top) < k {
			top = slices.Insert(top, i, h.Score)
		} else if i > 0 {
			// Drop the smallest; the new score goes where it belongs.
			copy(top[:i-1], top[1:i])
			top[i-1] = h.Score
		}
	}
	return top[0]
}

// nearTerms stands in for the words of a request that the index does not know,
// nor any of their concepts: the index's terms that start with the word's
// first prefixLen letters ("personalis" for "personalise"), at prefixWeight.
func (ix *Index) nearTerms(q []queryTerm) []queryTerm {
	known := map[int]bool{}
	for _, t := range q {
		if _, ok := ix.toolT.terms[t.term]; ok && !strings.HasPrefix(t.term, "#") {
			known[t.slot] = true
		}
	}
	var out []queryTerm
	for _, t := range q {
		if known[t.slot] || len(t.term) < prefixLen || strings.HasPrefix(t.term, "~") || strings.HasPrefix(t.term, "#") {
			continue
		}
		p := t.term[:prefixLen]
		for term := range ix.toolT.terms {
			if strings.HasPrefix(term, p) {
				out = append(out, queryTerm{term, t.weight * prefixWeight, t.slot})
			}
		}
	}
	return out
}

// docFields is the text of each field of doc, and its readOnlyHint (1 true,
// -1 false, 0 unsaid).
func docFields(doc Doc, cache stemCache) (f [numFields]string, readOnly int8) {
	f[fieldServer] = doc.Toolbox + " " + doc.Server
	f[fieldServerDesc] = doc.ToolboxDescription + "\n" + doc.ServerDescription
	// One decoding of the whole tool; each part is then read for what it
	// is, and a part of the wrong type is read as missing.
	var tool map[string]any
	if json.Unmarshal(doc.Tool, &tool) != nil {
		return f, 0
	}
	name, _ := tool["name"].(string)
	title, _ := tool["title"].(string)
	desc, _ := tool["description"].(string)
	ann, _ := tool["annotations"].(map[string]any)
	annTitle, _ := ann["title"].(string)
	if ro, ok := ann["readOnlyHint"].(bool); ok {
		readOnly = -1
		if ro {
			readOnly = 1
		}
	}
	f[fieldName], f[fieldNameVerb] = splitVerbs(name+" "+title+" "+annTitle, cache)
	f[fieldSummary], f[fieldBody] = firstSentence(desc)
	var names, descs strings.Builder
	count := 0
	schemaText(tool["inputSchema"], 0, &count, &names, &descs)
	f[fieldParamNames] = names.String()
	f[fieldParamDesc] = descs.String()
	return f, readOnly
}

// verbsReadOnly reads a tool's readOnlyHint from the verbs of its name when
// the tool does not say (many servers do not annotate their tools): a name
// whose verbs change things ("create", "update", "delete") changes things
// (-1), one whose verbs only look ("get", "list", "search") only reads (1),
// and one with no such verb says nothing (0).
func verbsReadOnly(verbs string, cache stemCache) int8 {
	reads := false
	for _, w := range splitWords(verbs) {
		for _, c := range concepts()[cache.stem(w)] {
			if changeActions[c] {
				return -1
			}
			reads = reads || readActions[c]
		}
	}
	if reads {
		return 1
	}
	return 0
}

// nameWords are the words of a tool's name that are not its server's (nor
// stop words, nor a run kept whole after its parts), each as its stem and the
// concepts of its stem.
func nameWords(doc Doc, cache stemCache) [][]string {
	var t struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(doc.Tool, &t) != nil {
		return nil
	}
	server := map[string]bool{}
	for _, w := range splitWords(doc.Toolbox + " " + doc.Server) {
		server[w] = true
	}
	var out [][]string
	words := splitWords(t.Name)
	for i, w := range words {
		if stopWords()[w] || server[w] || joinsPrevious(words, i) {
			continue
		}
		s := cache.stem(w)
		out = append(out, append([]string{s}, concepts()[s]...))
	}
	return out
}

// joinsPrevious reports whether words[i] is the words before it joined, as
// [splitWords] keeps a run cut at case changes whole after its parts.
func joinsPrevious(words []string, i int) bool {
	joined := ""
	for j := i - 1; j >= 0 && len(joined) < len(words[i]); j-- {
		joined = words[j] + joined
		if joined == words[i] {
			return true
		}
	}
	return false
}

// coveredWords counts the words that have a term in set.
func coveredWords(words [][]string, set map[string]bool) int {
	n := 0
	for _, terms := range words {
		for _, t := range terms {
			if set[t] {
				n++
				break
			}
		}
	}
	return n
}

// splitVerbs splits a tool's name into its verbs (the words of
// [actionGroups]) and its other words. Most tools' names start with one of a
// few verbs, so a request's verb finds hundreds of tools by name; the name's
// other words are what sets a tool apart.
func splitVerbs(name string, cache stemCache) (others, verbs string) {
	var o, v []string
	for _, w := range splitWords(plainURLs(name)) {
		if !stopWords()[w] && actionStems()[cache.stem(w)] {
			v = append(v, w)
		} else {
			o = append(o, w)
		}
	}
	return strings.Join(o, " "), strings.Join(v, " ")
}

// schemaText writes the property names of an input schema (and of the objects
// nested in it, and their enum values) to names and their descriptions to
// descs, reading at most maxProperties properties maxSchemaDepth levels deep.
func schemaText(schema any, depth int, count *int, names, descs *strings.Builder) {
	s, ok := schema.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return
	}
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if *count >= maxProperties {
			return
		}
		*count++
		names.WriteString(k)
		names.WriteByte(' ')
		p, _ := props[k].(map[string]any)
		d, _ := p["description"].(string)
		if len(d) > maxParamDesc {
			d = d[:maxParamDesc]
		}
		descs.WriteString(d)
		descs.WriteString("\n")
		enum, _ := p["enum"].([]any)
		for _, e := range enum {
			if e, ok := e.(string); ok {
				names.WriteString(e)
				names.WriteByte(' ')
			}
		}
		schemaText(p, depth+1, count, names, descs)
	}
	if items, ok := s["items"]; ok {
		schemaText(items, depth+1, count, names, descs)
	}
}

// FirstSentence is the first sentence of a tool's description, as the
// search weighs it (see firstSentence).
func FirstSentence(desc string) string {
	first, _ := firstSentence(desc)
	return first
}

// firstSentence splits a description after its first sentence: at the first
// ". " (or "." before a line break, "!", "?"), or a blank line, whichever comes
// first; a description of one sentence is all first sentence.
func firstSentence(desc string) (first, rest string) {
	desc = strings.TrimSpace(desc)
	for i := 0; i < len(desc); i++ {
		switch desc[i] {
		case '.', '!', '?':
			if i+1 < len(desc) && (desc[i+1] == ' ' || desc[i+1] == '\n' || desc[i+1] == '\t') && !abbreviation(desc[:i]) {
				return desc[:i+1], desc[i+1:]
			}
		case '\n':
			if i+1 < len(desc) && desc[i+1] == '\n' {
				return desc[:i], desc[i:]
			}
		}
	}
	return desc, ""
}

// abbreviation reports whether text ends in a short word that a full stop
// follows without ending the sentence ("e.g", "i.e", "etc").
func abbreviation(text string) bool {
	i := strings.LastIndexAny(text, " \n\t(")
	switch strings.ToLower(text[i+1:]) {
	case "e.g", "i.e", "etc", "vs", "eg", "ie":
		return true
	}
	return false
}
