package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The evaluation: real servers' tool lists captured in testdata/search/tools,
// and sets of requests phrased as an agent mid-task would, each with the tools
// that serve it. queries-dev.json is the set the ranking was first tuned on;
// queries-heldout.json and queries-heldout2.json were written apart from the
// ranking, each run once, and have since been tuned on too.
// queries-heldout3.json was written blind after held-out-2's first run and
// is never tuned on: it says how the search does on requests it never saw.
// Beside them, two published MCP tool-retrieval sets with their own tools
// (testdata/search/public): each is cut in halves by a hash of the request,
// a tuning half and a held-out half never looked at while tuning. And the
// first-step tasks of dev and held-out written as their first action too
// (queries-firstaction.json). make search-eval prints the table, beside
// plain BM25.
//
// While tuning, SEARCH_EVAL_SETS=dev,held-out,held-out-2,held-out-3,azure-tune,mcpproxy-tune
// keeps the held-out sets out of the run and SEARCH_EVAL_MISSES=1 lists the
// requests whose tools are not in the top 5 (never those of a held-out set).
// SEARCH_EVAL_CV=1 cross-validates WordNet's and first steps' weights, and
// SEARCH_EVAL_TUNE=1 all of index.go's knobs (minutes: it reranks every
// tuning request some 2,000 times).

const evalDir = "../../testdata/search"

// The goals (issue 28), for the workbench's search at limit 5 on requests
// it was never tuned on: recall@5 ≥ 0.90 overall, ≥ 0.70 on first-step
// requests, ≥ 0.85 on paraphrases; recall@1 ≥ 0.70; at most 12 KB returned
// on average. The test logs where a held-out set is short of them, and holds
// each set to floors just under what the ranking reaches, so that a change
// that loses ground fails. docs/search-evaluation.md has the figures.
const (
	goalRecall5  = 0.90
	goalRecall1  = 0.70
	goalAvgBytes = 12 * 1024
)

var goalKinds = map[string]float64{"first-step": 0.70, "paraphrase": 0.85}

// ownSets are the request sets over the captured tools. Dev, held-out and
// held-out-2 have been looked at while tuning; held-out-3 was written blind
// and is never tuned on: only its figures are printed, never its misses.
// Held-out-3's first run, on 2026-11-24: recall@5 0.812 (plain BM25 0.549).
var ownSets = []struct {
	name, file       string
	optional, tuning bool
	floor, floor1    float64
	kindFloors       map[string]float64
}{
	{name: "dev", file: "queries-dev.json", tuning: true, floor: 0.91},
	{name: "held-out", file: "queries-heldout.json", tuning: true, floor: 0.89},
	{name: "held-out-2", file: "queries-heldout2.json", optional: true, tuning: true, floor: 0.84},
	// Run once after the work of issue 28 (2026-11-26): recall@5 0.820,
	// recall@1 0.620, first-step 0.800, paraphrase 0.556.
	// Held-out-3 has since been looked at (2026-11-26): no longer blind, it
	// is a tuning set from the third round of work on meaning on (after it:
	// recall@5 0.863, recall@1 0.639, first-step 0.850, paraphrase 0.654).
	{name: "held-out-3", file: "queries-heldout3.json", optional: true, tuning: true, floor: 0.86, floor1: 0.63,
		kindFloors: map[string]float64{"first-step": 0.84, "paraphrase": 0.65}},
	// Held-out-4 was written blind on 2026-11-26, before the second round of
	// work on meaning; never tuned on, its misses never printed. Its first
	// run and its run after that work (which was not kept) gave the same:
	// recall@5 0.805, recall@1 0.545, first-step 0.622, paraphrase 0.768.
	// After the third round: 0.818, 0.565, 0.644, 0.786. (During that round
	// a failing floor showed its figures once to the author of the
	// vocabulary, who then backed out a change to tasks' first steps.)
	{name: "held-out-4", file: "queries-heldout4.json", optional: true, floor: 0.81, floor1: 0.56,
		kindFloors: map[string]float64{"first-step": 0.64, "paraphrase": 0.78}},
	// Held-out-5 was written blind on 2026-11-26 from the tool lists alone,
	// before the third round of work on meaning, and never ranked while
	// written; never tuned on, its misses never printed, judged once at the
	// end of that work: recall@5 0.693, recall@1 0.530, first-step 0.583,
	// paraphrase 0.539 (the ranking before that round: 0.653, 0.465, 0.567,
	// 0.474; plain BM25 0.361, 0.267).
	{name: "held-out-5", file: "queries-heldout5.json", optional: true, floor: 0.69, floor1: 0.52,
		kindFloors: map[string]float64{"first-step": 0.58, "paraphrase": 0.53}},
}

// publicSets are published MCP tool-retrieval sets (testdata/search/public,
// its README says where each comes from and under which license), each cut
// in two halves by a hash of the request: "tune" may be looked at while
// tuning, "held-out" never is.
var publicSets = []struct {
	name, tools, queries string
	tuneFloor            float64
	floor, floor1        float64
	kindFloors           map[string]float64
}{
	// Held-out half, 2026-11-26: recall@5 0.983, recall@1 0.799 (plain
	// BM25 0.937, 0.766); after the third round of work on meaning, 0.983,
	// 0.820.
	{name: "azure", tools: "public/azure-tools.json", queries: "public/azure-queries.json", tuneFloor: 0.95, floor: 0.97, floor1: 0.81},
	// Held-out half, 2026-11-26: recall@5 0.955, recall@1 0.773 (plain
	// BM25 0.682, 0.500); after the third round, 0.955, 0.818.
	{name: "mcpproxy", tools: "public/mcpproxy-tools.json", queries: "public/mcpproxy-queries.json", tuneFloor: 0.92, floor: 0.90, floor1: 0.80},
}

// phrasingFloors hold the phrasings' recall@5 (2026-11-26: the goal 0.732,
// the first action 0.976; after the third round, 0.756 and 0.976).
var phrasingFloors = map[string]float64{"goal": 0.74, "first action": 0.95}

type capturedServer struct {
	Server       string            `json:"server"`
	Package      string            `json:"package"`
	Title        string            `json:"title"`
	Instructions string            `json:"instructions"`
	Tools        []json.RawMessage `json:"tools"`
}

type evalQuery struct {
	Query  string   `json:"query"`
	Kind   string   `json:"kind"`
	Expect []string `json:"expect"`
}

type evalCorpus struct {
	docs []Doc
	keys []string // "server/tool" per doc
}

func loadCorpus(tb testing.TB) evalCorpus {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(evalDir, "tools", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captured tool lists in %s/tools (%v)", evalDir, err)
	}
	sort.Strings(files)
	var c evalCorpus
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var s capturedServer
		if err := json.Unmarshal(b, &s); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		if s.Server == "" || len(s.Tools) == 0 {
			tb.Fatalf("%s: no server name or no tools", f)
		}
		desc := strings.TrimSpace(s.Title + "\n" + s.Instructions)
		for _, raw := range s.Tools {
			// The files are indented for reading; a server sends its tools
			// compact, and so does the workbench.
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			raw = compact.Bytes()
			var t struct{ Name string }
			if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
				tb.Fatalf("%s: a tool without a name: %.80s", f, raw)
			}
			c.docs = append(c.docs, Doc{Toolbox: s.Server, Server: s.Server, ServerDescription: desc, Tool: raw})
			c.keys = append(c.keys, s.Server+"/"+t.Name)
		}
	}
	return c
}

func loadQueries(tb testing.TB, file string, c evalCorpus) []evalQuery {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(evalDir, file))
	if err != nil {
		tb.Fatal(err)
	}
	var qs []evalQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	known := map[string]bool{}
	for _, k := range c.keys {
		known[k] = true
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Query) == "" || q.Kind == "" || len(q.Expect) == 0 {
			tb.Fatalf("%s: query %d lacks query, kind or expect", file, i)
		}
		for _, e := range q.Expect {
			if !known[e] {
				tb.Fatalf("%s: query %d expects %q, which is not a captured tool", file, i, e)
			}
		}
	}
	return qs
}

// ranker returns the docs it finds for a query, best first, at most limit.
type ranker func(query string, limit int) []int

func workbenchRanker(c evalCorpus) ranker {
	ix := NewIndex(c.docs)
	return func(q string, limit int) []int {
		var out []int
		for _, h := range ix.Search(q, limit) {
			out = append(out, h.Doc)
		}
		return out
	}
}

// bm25 is the baseline: standard BM25 (k1 1.2, b 0.75) over a tool's name
// and description as one text, cut into lower-case tokens at whitespace and
// punctuation other than "_" (a regular expression's \w+), so identifiers stay
// whole: no splitting of names, no stemming, no stop words.
type bm25 struct {
	postings map[string][]bm25Posting
	lens     []float64
	avg      float64
}

type bm25Posting struct {
	doc int
	tf  float64
}

func plainTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

func newBM25(docs []Doc) *bm25 {
	b := &bm25{postings: map[string][]bm25Posting{}, lens: make([]float64, len(docs))}
	total := 0.0
	for d, doc := range docs {
		var t struct{ Name, Description string }
		json.Unmarshal(doc.Tool, &t)
		tokens := plainTokens(t.Name + " " + t.Description)
		b.lens[d] = float64(len(tokens))
		total += b.lens[d]
		tf := map[string]float64{}
		var order []string
		for _, tok := range tokens {
			if tf[tok] == 0 {
				order = append(order, tok)
			}
			tf[tok]++
		}
		for _, tok := range order {
			b.postings[tok] = append(b.postings[tok], bm25Posting{d, tf[tok]})
		}
	}
	b.avg = total / math.Max(float64(len(docs)), 1)
	return b
}

func (b *bm25) search(q string, limit int) []int {
	const k1, bb = 1.2, 0.75
	n := float64(len(b.lens))
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, tok := range plainTokens(q) {
		if seen[tok] {
			continue
		}
		seen[tok] = true
		ps := b.postings[tok]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			scores[p.doc] += idf * p.tf * (k1 + 1) / (p.tf + k1*(1-bb+bb*b.lens[p.doc]/b.avg))
		}
	}
	out := make([]int, 0, len(scores))
	for d := range scores {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if scores[out[i]] != scores[out[j]] {
			return scores[out[i]] > scores[out[j]]
		}
		return out[i] < out[j]
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

type evalResult struct {
	n, hit1, hit5 int
	rr, bytes     float64
	kinds         map[string][2]int // kind → (found in top 5, queries)
	misses        []string
}

func (r evalResult) recall1() float64  { return float64(r.hit1) / float64(r.n) }
func (r evalResult) recall5() float64  { return float64(r.hit5) / float64(r.n) }
func (r evalResult) mrr() float64      { return r.rr / float64(r.n) }
func (r evalResult) avgBytes() float64 { return r.bytes / float64(r.n) }

func evaluate(c evalCorpus, rank ranker, qs []evalQuery) evalResult {
	r := evalResult{n: len(qs), kinds: map[string][2]int{}}
	for _, q := range qs {
		found := rank(q.Query, 5)
		want := map[string]bool{}
		for _, e := range q.Expect {
			want[e] = true
		}
		at := 0
		var got []string
		for i, d := range found {
			r.bytes += float64(len(c.docs[d].Tool))
			got = append(got, c.keys[d])
			if at == 0 && want[c.keys[d]] {
				at = i + 1
			}
		}
		k := r.kinds[q.Kind]
		k[1]++
		if at > 0 {
			r.rr += 1 / float64(at)
			r.hit5++
			k[0]++
			if at == 1 {
				r.hit1++
			}
		} else {
			r.misses = append(r.misses, fmt.Sprintf("%-10s %q\n           want %v\n           got  %v", q.Kind, q.Query, q.Expect, got))
		}
		r.kinds[q.Kind] = k
	}
	return r
}

func TestSearchEval(t *testing.T) {
	runs := evalRuns(t)
	if os.Getenv("SEARCH_EVAL_MISSES") != "" {
		// The misses of a held-out set are never printed: its requests stay
		// unseen. Asking for misses with a held-out set in the run is refused.
		for _, s := range runs.sets {
			if !s.tuning {
				t.Fatalf("SEARCH_EVAL_MISSES prints the misses of tuning sets only, and %s is held out: name only tuning sets in SEARCH_EVAL_SETS (%s)", s.name, strings.Join(tuningSetNames(), ","))
			}
		}
	}
	var out strings.Builder
	for _, c := range runs.corpora {
		servers := map[string]bool{}
		for _, d := range c.docs {
			servers[d.Server] = true
		}
		fmt.Fprintf(&out, "%s: %d tools of %d servers (%s)\n", c.name, len(c.docs), len(servers), c.source)
	}
	fmt.Fprintf(&out, "\n%-18s %-10s %7s %8s %8s %6s %10s\n", "set", "ranker", "queries", "recall@1", "recall@5", "MRR", "avg bytes")
	results := map[string]evalResult{}
	for _, s := range runs.sets {
		for _, rk := range []struct {
			name string
			rank ranker
		}{{"workbench", s.corpus.workbench}, {"bm25", s.corpus.bm25}} {
			r := evaluate(s.corpus.evalCorpus, rk.rank, s.queries)
			results[s.name+"/"+rk.name] = r
			fmt.Fprintf(&out, "%-18s %-10s %7d %8.3f %8.3f %6.3f %10.0f\n", s.name, rk.name, r.n, r.recall1(), r.recall5(), r.mrr(), r.avgBytes())
		}
	}
	fmt.Fprintf(&out, "\nrecall@5 per kind\n")
	for _, s := range runs.sets {
		for _, rk := range []string{"workbench", "bm25"} {
			r := results[s.name+"/"+rk]
			kinds := make([]string, 0, len(r.kinds))
			for k := range r.kinds {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			fmt.Fprintf(&out, "%-18s %-10s", s.name, rk)
			for _, k := range kinds {
				v := r.kinds[k]
				fmt.Fprintf(&out, "  %s %.3f (%d)", k, float64(v[0])/float64(v[1]), v[1])
			}
			fmt.Fprintln(&out)
		}
	}
	if runs.phrasings != nil {
		fmt.Fprintf(&out, "\nthe same first-step tasks asked four ways (%s, %d tasks; captured tools)\n", phrasingFile, len(runs.phrasings))
		fmt.Fprintf(&out, "%-22s %-10s %8s %8s %6s\n", "written as", "ranker", "recall@1", "recall@5", "MRR")
		for _, form := range phrasingForms {
			qs := make([]evalQuery, len(runs.phrasings))
			for i, p := range runs.phrasings {
				qs[i] = evalQuery{Query: form.query(p), Kind: form.name, Expect: p.Expect}
			}
			for _, rk := range []struct {
				name string
				rank ranker
			}{{"workbench", runs.own.workbench}, {"bm25", runs.own.bm25}} {
				r := evaluate(runs.own.evalCorpus, rk.rank, qs)
				results["phrasing "+form.name+"/"+rk.name] = r
				fmt.Fprintf(&out, "%-22s %-10s %8.3f %8.3f %6.3f\n", form.name, rk.name, r.recall1(), r.recall5(), r.mrr())
			}
		}
	}
	if os.Getenv("SEARCH_EVAL_CV") != "" {
		crossValidate(&out, runs)
	}
	if os.Getenv("SEARCH_EVAL_TUNE") != "" {
		tuneKnobs(&out, runs)
	}
	if os.Getenv("SEARCH_EVAL_MISSES") != "" {
		for _, s := range runs.sets {
			fmt.Fprintf(&out, "\n%s misses of the workbench's search\n", s.name)
			for _, m := range results[s.name+"/workbench"].misses {
				fmt.Fprintln(&out, m)
			}
		}
	}
	t.Log("\n" + out.String())

	for form, floor := range phrasingFloors {
		if r, ok := results["phrasing "+form+"/workbench"]; ok && r.recall5() < floor {
			t.Errorf("first-step tasks written as the %s: recall@5 %.3f is below its floor %.2f", form, r.recall5(), floor)
		}
	}
	for _, s := range runs.sets {
		r := results[s.name+"/workbench"]
		if !s.tuning {
			logGoals(t, s.name, r)
		}
		if r.recall5() < s.floor {
			t.Errorf("%s recall@5 %.3f is below its floor %.2f", s.name, r.recall5(), s.floor)
		}
		if r.recall1() < s.floor1 {
			t.Errorf("%s recall@1 %.3f is below its floor %.2f", s.name, r.recall1(), s.floor1)
		}
		for kind, floor := range s.kindFloors {
			if v := r.kinds[kind]; v[1] > 0 && float64(v[0])/float64(v[1]) < floor {
				t.Errorf("%s recall@5 of %s requests %.3f is below its floor %.2f", s.name, kind, float64(v[0])/float64(v[1]), floor)
			}
		}
		if r.avgBytes() > goalAvgBytes {
			t.Errorf("%s average bytes returned %.0f is above the goal %d", s.name, r.avgBytes(), goalAvgBytes)
		}
	}
}

// logGoals logs where a held-out set is short of the goals.
func logGoals(t *testing.T, name string, r evalResult) {
	t.Helper()
	if r.recall5() < goalRecall5 {
		t.Logf("%s recall@5 %.3f is below the goal %.2f", name, r.recall5(), goalRecall5)
	}
	if r.recall1() < goalRecall1 {
		t.Logf("%s recall@1 %.3f is below the goal %.2f", name, r.recall1(), goalRecall1)
	}
	for kind, goal := range goalKinds {
		if v := r.kinds[kind]; v[1] > 0 && float64(v[0])/float64(v[1]) < goal {
			t.Logf("%s recall@5 of %s requests %.3f is below the goal %.2f", name, kind, float64(v[0])/float64(v[1]), goal)
		}
	}
}

// A rankedCorpus is a corpus of tools with both rankers built over it.
type rankedCorpus struct {
	evalCorpus
	name, source    string
	workbench, bm25 ranker
}

func newRankedCorpus(name, source string, c evalCorpus) *rankedCorpus {
	return &rankedCorpus{evalCorpus: c, name: name, source: source, workbench: workbenchRanker(c), bm25: newBM25(c.docs).search}
}

type evalSet struct {
	name    string
	corpus  *rankedCorpus
	queries []evalQuery
	// tuning: its misses may be looked at (SEARCH_EVAL_MISSES); a held-out
	// set's never are.
	tuning bool
	// floor and floor1 hold recall@5 and recall@1; kindFloors recall@5 per
	// kind.
	floor, floor1 float64
	kindFloors    map[string]float64
}

type evalRunSets struct {
	corpora []*rankedCorpus
	sets    []evalSet
	// own is the captured tools' corpus; phrasings the first-step tasks of
	// phrasingFile, when the run has the dev set.
	own       *rankedCorpus
	phrasings []phrasing
}

// phrasingFile holds the first-step requests of the dev and held-out sets,
// each beside the same task written as its first action ("read the diff of
// pull request 12" for "review the changes in pull request 12 and leave
// feedback"): whether writing the first action rather than the goal changes
// what the search finds, which open_toolbox's description tells the model.
const phrasingFile = "queries-firstaction.json"

type phrasing struct {
	Goal   string   `json:"goal"`
	Action string   `json:"action"`
	Expect []string `json:"expect"`
}

var phrasingForms = []struct {
	name  string
	query func(phrasing) string
}{
	{"goal", func(p phrasing) string { return p.Goal }},
	{"first action", func(p phrasing) string { return p.Action }},
	{"action, then goal", func(p phrasing) string { return p.Action + ", then " + p.Goal }},
	{"goal, but first action", func(p phrasing) string { return p.Goal + ", but first " + p.Action }},
}

// tuningSetNames are the sets whose misses may be looked at.
func tuningSetNames() []string {
	var names []string
	for _, s := range ownSets {
		if s.tuning {
			names = append(names, s.name)
		}
	}
	for _, p := range publicSets {
		names = append(names, p.name+"-tune")
	}
	return names
}

// evalRuns are the request sets to evaluate: all of them, or those
// SEARCH_EVAL_SETS names (comma-separated: dev, held-out, held-out-2,
// held-out-3, held-out-4, held-out-5, azure-tune, azure-held-out,
// mcpproxy-tune, mcpproxy-held-out). The optional sets are evaluated when
// their files exist.
func evalRuns(tb testing.TB) evalRunSets {
	want := map[string]bool{}
	if v := os.Getenv("SEARCH_EVAL_SETS"); v != "" {
		for _, name := range strings.Split(v, ",") {
			want[strings.TrimSpace(name)] = true
		}
	}
	wanted := func(name string) bool { return len(want) == 0 || want[name] }
	var runs evalRunSets
	own := newRankedCorpus("captured", "testdata/search/tools", loadCorpus(tb))
	runs.corpora = append(runs.corpora, own)
	runs.own = own
	if wanted("dev") {
		b, err := os.ReadFile(filepath.Join(evalDir, phrasingFile))
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(b, &runs.phrasings); err != nil {
			tb.Fatalf("%s: %v", phrasingFile, err)
		}
		known := map[string]bool{}
		for _, k := range own.keys {
			known[k] = true
		}
		for i, p := range runs.phrasings {
			if p.Goal == "" || p.Action == "" || len(p.Expect) == 0 {
				tb.Fatalf("%s: entry %d lacks goal, action or expect", phrasingFile, i)
			}
			for _, e := range p.Expect {
				if !known[e] {
					tb.Fatalf("%s: entry %d expects %q, which is not a captured tool", phrasingFile, i, e)
				}
			}
		}
	}
	for _, s := range ownSets {
		if !wanted(s.name) {
			continue
		}
		if s.optional && len(want) == 0 {
			if _, err := os.Stat(filepath.Join(evalDir, s.file)); err != nil {
				continue
			}
		}
		runs.sets = append(runs.sets, evalSet{name: s.name, corpus: own, queries: loadQueries(tb, s.file, own.evalCorpus),
			tuning: s.tuning, floor: s.floor, floor1: s.floor1, kindFloors: s.kindFloors})
	}
	for _, p := range publicSets {
		if !wanted(p.name+"-tune") && !wanted(p.name+"-held-out") {
			continue
		}
		c, source := loadPublicCorpus(tb, p.tools)
		rc := newRankedCorpus(p.name, source, c)
		runs.corpora = append(runs.corpora, rc)
		tune, held := loadPublicQueries(tb, p.queries, c)
		if wanted(p.name + "-tune") {
			runs.sets = append(runs.sets, evalSet{name: p.name + "-tune", corpus: rc, queries: tune, tuning: true, floor: p.tuneFloor})
		}
		if wanted(p.name + "-held-out") {
			runs.sets = append(runs.sets, evalSet{name: p.name + "-held-out", corpus: rc, queries: held, floor: p.floor, floor1: p.floor1, kindFloors: p.kindFloors})
		}
	}
	if len(runs.sets) == 0 {
		tb.Fatalf("SEARCH_EVAL_SETS=%q names no set (dev, held-out, held-out-2, held-out-3, held-out-4, held-out-5, azure-tune, azure-held-out, mcpproxy-tune, mcpproxy-held-out)", os.Getenv("SEARCH_EVAL_SETS"))
	}
	return runs
}

// loadPublicCorpus reads a public corpus's tools (testdata/search/public):
// one server's ({"server", "tools"}) or several ({"servers": [...]}), and
// says where they come from.
func loadPublicCorpus(tb testing.TB, file string) (evalCorpus, string) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(evalDir, file))
	if err != nil {
		tb.Fatal(err)
	}
	var f struct {
		capturedServer
		Source  string           `json:"source"`
		Commit  string           `json:"commit"`
		License string           `json:"license"`
		Servers []capturedServer `json:"servers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	if f.Source == "" || len(f.Commit) < 12 || f.License == "" {
		tb.Fatalf("%s: source, commit and license must say where the tools come from", file)
	}
	servers := f.Servers
	if f.Server != "" {
		servers = append(servers, f.capturedServer)
	}
	var c evalCorpus
	for _, s := range servers {
		for _, raw := range s.Tools {
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				tb.Fatalf("%s: %v", file, err)
			}
			var t struct{ Name string }
			if err := json.Unmarshal(compact.Bytes(), &t); err != nil || t.Name == "" {
				tb.Fatalf("%s: a tool without a name: %.80s", file, raw)
			}
			c.docs = append(c.docs, Doc{Toolbox: s.Server, Server: s.Server, Tool: compact.Bytes()})
			c.keys = append(c.keys, s.Server+"/"+t.Name)
		}
	}
	return c, f.Source + " at " + f.Commit[:12] + ", " + f.License
}

// loadPublicQueries reads a public set's requests and returns its two
// halves, each request's kind set by what it shares with its tools: a
// request that shares no word (stop words left out, stemmed) with the name,
// title or description of any tool it expects is a paraphrase, any other
// direct (the rule internal/searchdata holds the own sets' paraphrases to).
func loadPublicQueries(tb testing.TB, file string, c evalCorpus) (tune, held []evalQuery) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(evalDir, file))
	if err != nil {
		tb.Fatal(err)
	}
	var qs []struct {
		evalQuery
		Split string `json:"split"`
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	words := map[string]map[string]bool{}
	for d, k := range c.keys {
		var t struct{ Name, Title, Description string }
		json.Unmarshal(c.docs[d].Tool, &t)
		ts, n := terms(t.Name + " " + t.Title + " " + t.Description)
		words[k] = map[string]bool{}
		for _, w := range ts[:n] {
			words[k][w] = true
		}
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Query) == "" || len(q.Expect) == 0 {
			tb.Fatalf("%s: query %d lacks query or expect", file, i)
		}
		q.Kind = "paraphrase"
		ts, n := terms(q.Query)
		for _, e := range q.Expect {
			if words[e] == nil {
				tb.Fatalf("%s: query %d expects %q, which is not in its corpus", file, i, e)
			}
			for _, w := range ts[:n] {
				if words[e][w] {
					q.Kind = "direct"
				}
			}
		}
		switch q.Split {
		case "tune":
			tune = append(tune, q.evalQuery)
		case "held-out":
			held = append(held, q.evalQuery)
		default:
			tb.Fatalf("%s: query %d: split %q is neither tune nor held-out", file, i, q.Split)
		}
	}
	return tune, held
}

// corpus1000 is the captured tools repeated, the repeats renamed, up to 1,000.
func corpus1000(b *testing.B) []Doc {
	c := loadCorpus(b)
	docs := make([]Doc, 0, 1000)
	for round := 0; len(docs) < 1000; round++ {
		for _, d := range c.docs {
			if len(docs) == 1000 {
				break
			}
			if round > 0 {
				var m map[string]any
				if json.Unmarshal(d.Tool, &m) == nil {
					m["name"] = fmt.Sprintf("%v_copy%d", m["name"], round)
					d.Tool, _ = json.Marshal(m)
				}
				d.Server = fmt.Sprintf("%s%d", d.Server, round)
				d.Toolbox = d.Server
			}
			docs = append(docs, d)
		}
	}
	return docs
}

func benchQueries(b *testing.B) []string {
	c := loadCorpus(b)
	var qs []string
	for _, q := range loadQueries(b, "queries-dev.json", c) {
		qs = append(qs, q.Query)
	}
	return qs
}

func BenchmarkSearch(b *testing.B) {
	ix := NewIndex(corpus1000(b))
	qs := benchQueries(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Search(qs[i%len(qs)], 5)
	}
}

func BenchmarkNewIndex(b *testing.B) {
	docs := corpus1000(b)
	b.ReportAllocs()
	for b.Loop() {
		NewIndex(docs)
	}
}

// scaleCorpus is n tools in servers of 100 (the last one smaller): every
// real tool of testdata/search (the captured servers' and the public
// corpora's, 593) taken in turn, each server named after the server of its
// first tool and numbered, a tool met again renamed with its round, so that
// no two tools are the same. 10,000 tools are 100 servers.
func scaleCorpus(tb testing.TB, n int) []Doc {
	tb.Helper()
	pool := loadCorpus(tb).docs
	for _, p := range publicSets {
		c, _ := loadPublicCorpus(tb, p.tools)
		pool = append(pool, c.docs...)
	}
	docs := make([]Doc, 0, n)
	for i := 0; i < n; i++ {
		d := pool[i%len(pool)]
		if round := i / len(pool); round > 0 {
			var m map[string]any
			if json.Unmarshal(d.Tool, &m) == nil {
				m["name"] = fmt.Sprintf("%v_%d", m["name"], round)
				d.Tool, _ = json.Marshal(m)
			}
		}
		first := pool[(i/100*100)%len(pool)]
		d.Server = fmt.Sprintf("%s-%d", first.Server, i/100)
		d.Toolbox = d.Server
		d.ServerDescription = first.ServerDescription
		docs = append(docs, d)
	}
	return docs
}

// BenchmarkSearchScale is a search (limit 5, the dev set's requests in turn)
// over 400 and 10,000 tools, and the index's memory: the heap it holds
// after a collection (index-MiB), the tools themselves not counted. docs/performance.md has the figures.
func BenchmarkSearchScale(b *testing.B) {
	qs := benchQueries(b)
	for _, n := range []int{400, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			docs := scaleCorpus(b, n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ix := NewIndex(docs)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				ix.Search(qs[i%len(qs)], 5)
			}
			b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/(1<<20), "index-MiB")
			runtime.KeepAlive(ix)
			runtime.KeepAlive(docs) // the tools are the caller's, not the index's
		})
	}
}

// A tuningCase is one request of a tuning set, for cross-validation.
type tuningCase struct {
	set string
	c   *rankedCorpus
	q   evalQuery
}

// tuningCases are the requests of the run's tuning sets (never a held-out
// set's).
func tuningCases(runs evalRunSets) []tuningCase {
	var cases []tuningCase
	for _, s := range runs.sets {
		if s.tuning {
			for _, q := range s.queries {
				cases = append(cases, tuningCase{s.name, s.corpus, q})
			}
		}
	}
	return cases
}

// rankCases ranks every case with the knobs as they are (an index per
// corpus) and returns the rank (1..5) of each case's first expected tool, 0
// when none is in the top 5.
func rankCases(cases []tuningCase) []int {
	r := make([]int, len(cases))
	indexes := map[*rankedCorpus]*Index{}
	for i, tc := range cases {
		ix := indexes[tc.c]
		if ix == nil {
			ix = NewIndex(tc.c.docs)
			indexes[tc.c] = ix
		}
		for j, h := range ix.Search(tc.q.Query, 5) {
			if slices.Contains(tc.q.Expect, tc.c.keys[h.Doc]) {
				r[i] = j + 1
				break
			}
		}
	}
	return r
}

// fold is the case's fold of five, by a hash of its request.
func (tc tuningCase) fold() int {
	h := fnv.New32a()
	h.Write([]byte(tc.q.Query))
	return int(h.Sum32() % 5)
}

// crossValidate (SEARCH_EVAL_CV=1) chooses the weights of WordNet's terms and
// of tasks' first steps by 5-fold cross-validation over the tuning sets'
// requests (never a held-out set's): each fold's figure is that of the
// weights best on the other four, and the mean of the folds is set beside
// that of the weights index.go has. Which parts of WordNet the table keeps
// is wordnetgen's, measured the same way (docs/search-evaluation.md).
func crossValidate(out *strings.Builder, runs evalRunSets) {
	cases := tuningCases(runs)
	type knobs struct{ wn, hyper, first float64 }
	saved := knobs{wordnetWeight, wordnetHyperWeight, firstStepWeight}
	defer func() { wordnetWeight, wordnetHyperWeight, firstStepWeight = saved.wn, saved.hyper, saved.first }()
	grid := []knobs{saved}
	for _, wn := range []float64{0, 0.2, 0.4, 0.6} {
		for _, hyper := range []float64{0, 0.15, 0.3} {
			for _, first := range []float64{0, 0.3, 0.5, 0.8} {
				if (wn > 0 || hyper == 0) && (knobs{wn, hyper, first}) != saved {
					grid = append(grid, knobs{wn, hyper, first})
				}
			}
		}
	}
	// found[g][i]: whether the weights grid[g] put a tool of cases[i] in
	// the top 5.
	found := make([][]bool, len(grid))
	for g, k := range grid {
		wordnetWeight, wordnetHyperWeight, firstStepWeight = k.wn, k.hyper, k.first
		found[g] = make([]bool, len(cases))
		for i, at := range rankCases(cases) {
			found[g][i] = at > 0
		}
	}
	fold := func(i int) int { return cases[i].fold() }
	// score is the mean over the sets of recall@5, over the cases keep takes.
	score := func(g int, keep func(int) bool) float64 {
		hit, n := map[string]float64{}, map[string]float64{}
		for i, tc := range cases {
			if keep(i) {
				n[tc.set]++
				if found[g][i] {
					hit[tc.set]++
				}
			}
		}
		sum := 0.0
		for set := range n {
			sum += hit[set] / n[set]
		}
		return sum / float64(len(n))
	}
	fmt.Fprintf(out, "\n5-fold cross-validation of the weights over the tuning sets (mean recall@5 of the sets)\n")
	var cv, kept float64
	for f := 0; f < 5; f++ {
		best, bestScore := 0, -1.0
		for g := range grid {
			if s := score(g, func(i int) bool { return fold(i) != f }); s > bestScore {
				best, bestScore = g, s
			}
		}
		in := func(i int) bool { return fold(i) == f }
		cv += score(best, in) / 5
		kept += score(0, in) / 5
		fmt.Fprintf(out, "fold %d: WordNet %.2f, hypernyms %.2f, first steps %.2f: %.3f (index.go's weights %.3f)\n",
			f, grid[best].wn, grid[best].hyper, grid[best].first, score(best, in), score(0, in))
	}
	fmt.Fprintf(out, "cross-validated %.3f, index.go's weights %.3f\n", cv, kept)
}

// tuneKnobs (SEARCH_EVAL_TUNE=1) tunes the ranking's knobs (index.go) by
// coordinate ascent over the tuning sets' requests (never a held-out set's),
// scored by the mean over the sets of (recall@5 + recall@1 + MRR) / 3, and
// says by 5-fold cross-validation what that gains on requests the ascent did
// not see: each fold is tuned on the other four. It prints the knobs tuned
// on all the tuning requests; index.go takes them by hand.
func tuneKnobs(out *strings.Builder, runs evalRunSets) {
	cases := tuningCases(runs)
	type knob struct {
		name string
		p    *float64
	}
	knobs := []knob{{"actionWeight", &actionWeight}, {"conceptWeight", &conceptWeight}, {"synonymStack", &synonymStack},
		{"laterStepWeight", &laterStepWeight}, {"coordPower", &coordPower}, {"serverBoost", &serverBoost},
		{"serverB", &serverB}, {"mentionBoost", &mentionBoost}, {"heavyPenalty", &heavyPenalty},
		{"changePenalty", &changePenalty}, {"taskBoost", &taskBoost}, {"nameCover", &nameCover},
		{"deletePenalty", &deletePenalty}, {"readPenalty", &readPenalty}, {"prefixWeight", &prefixWeight},
		{"wordnetWeight", &wordnetWeight}, {"wordnetHyperWeight", &wordnetHyperWeight}, {"firstStepWeight", &firstStepWeight}}
	for f := range fieldWeights {
		knobs = append(knobs, knob{fmt.Sprintf("fieldWeights[%d].weight", f), &fieldWeights[f].weight},
			knob{fmt.Sprintf("fieldWeights[%d].b", f), &fieldWeights[f].b})
	}
	saved := make([]float64, len(knobs))
	for i, k := range knobs {
		saved[i] = *k.p
	}
	restore := func(v []float64) {
		for i, k := range knobs {
			*k.p = v[i]
		}
	}
	defer restore(saved)
	fold := func(i int) int { return cases[i].fold() }
	score := func(r []int, keep func(int) bool) float64 {
		sum, n := map[string]float64{}, map[string]float64{}
		for i, tc := range cases {
			if !keep(i) {
				continue
			}
			n[tc.set]++
			if r[i] > 0 {
				v := 1 + 1/float64(r[i])
				if r[i] == 1 {
					v++
				}
				sum[tc.set] += v / 3
			}
		}
		total := 0.0
		for set := range n {
			total += sum[set] / n[set]
		}
		return total / float64(len(n))
	}
	steps := []float64{0, 0.5, 0.75, 1.33, 2}
	ascend := func(keep func(int) bool) []float64 {
		restore(saved)
		best := score(rankCases(cases), keep)
		for pass := 0; pass < 2; pass++ {
			improved := false
			for _, k := range knobs {
				base := *k.p
				for _, m := range steps {
					v := base * m
					if base == 0 {
						v = m * 0.25
					}
					if v == *k.p {
						continue
					}
					old := *k.p
					*k.p = v
					if s := score(rankCases(cases), keep); s > best+1e-9 {
						best, improved = s, true
					} else {
						*k.p = old
					}
				}
			}
			if !improved {
				break
			}
		}
		v := make([]float64, len(knobs))
		for i, k := range knobs {
			v[i] = *k.p
		}
		return v
	}
	fmt.Fprintf(out, "\nknob tuning by coordinate ascent, 5-fold cross-validated over the tuning sets (mean of (R@5+R@1+MRR)/3 over the sets)\n")
	var cv, kept float64
	for f := 0; f < 5; f++ {
		v := ascend(func(i int) bool { return fold(i) != f })
		in := func(i int) bool { return fold(i) == f }
		restore(v)
		tuned := score(rankCases(cases), in)
		restore(saved)
		base := score(rankCases(cases), in)
		cv += tuned / 5
		kept += base / 5
		fmt.Fprintf(out, "fold %d: tuned %.3f, index.go's %.3f\n", f, tuned, base)
	}
	fmt.Fprintf(out, "cross-validated %.3f, index.go's %.3f\n", cv, kept)
	v := ascend(func(int) bool { return true })
	for i, k := range knobs {
		if v[i] != saved[i] {
			fmt.Fprintf(out, "%s: %.3g (index.go %.3g)\n", k.name, v[i], saved[i])
		}
	}
}
