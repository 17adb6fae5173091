package search

import "strings"

// conceptGroups is the search's small thesaurus: the words an agent uses for
// the same action or thing, so that "remove the ticket" finds delete_issue.
// Each line is a concept and the words (or two-word phrases, joined by "+")
// that name it; a word may name several concepts. Words are written plainly
// and stemmed when the table is built, so "deleting" and "deletes" match too.
//
// Documents and requests both get the concepts of their words as extra terms
// (see [appendConcepts]), so a request word and a tool word meet when they
// share a concept, while the same word on both sides still counts for more.
// The table is general vocabulary of tools and agents' requests; it is not a
// list of any particular server's tools.
var conceptGroups = []string{
	// Actions.
	"delete: delete remove erase destroy drop trash purge rm del unlink discard wipe",
	"create: create make new add insert generate init initialize register open+new",
	"update: update edit modify change alter patch amend revise tweak adjust set",
	"read: read get fetch retrieve view show display open load cat see look inspect obtain access check",
	"list: list enumerate ls browse show index overview",
	"search: search find lookup look+up query grep locate seek hunt discover filter match",
	"write: write save store put persist dump record overwrite",
	"move: move mv relocate rename transfer",
	"copy: copy cp duplicate clone",
	"run: run execute exec invoke launch trigger perform call start",
	"stop: stop kill terminate halt cancel abort",
	"close: close shut quit exit dismiss",
	"send: send post publish notify dispatch deliver share tell",
	"navigate: navigate go goto visit open browse load go+to",
	"back: back previous return",
	"click: click press tap",
	"type: type fill enter input keyboard keystroke typing",
	"wait: wait sleep pause delay",
	"download: download grab",
	"upload: upload attach attachment",
	"merge: merge combine squash",
	"compare: compare diff difference changes delta",
	"convert: convert translate transform",
	"summarize: summarize summary digest tldr overview",
	"think: think thinking reason reasoning plan planning reflect brainstorm thought step+by",
	"remember: remember memorize memory recall knowledge",
	"sum: sum plus total addition add calculate compute arithmetic",
	"echo: echo repeat parrot",
	"scroll: scroll",
	"hover: hover mouseover",
	"drag: drag drop",
	"select: select choose pick option dropdown",
	"login: login logon signin sign+in log+in authenticate auth authorize",
	"evaluate: evaluate eval javascript js script",
	"review: review approve approval",
	"assign: assign assignee owner",
	"resize: resize viewport dimension dimensions",
	"count: count number how+many",
	"install: install setup",
	// Things.
	"file: file files",
	"directory: directory folder dir",
	"tree: tree hierarchy recursive nested structure",
	"metadata: metadata info information details stat stats properties attributes size permissions",
	"content: content contents text body",
	"issue: issue ticket bug defect",
	"pullrequest: pr prs mr pull+request merge+request",
	"repository: repository repo codebase",
	"commit: commit changeset revision sha",
	"branch: branch",
	"comment: comment reply remark annotation feedback",
	"message: message msg chat dm",
	"channel: channel room conversation thread",
	"user: user member person people account profile teammate colleague",
	"team: team group org organization",
	"webpage: webpage web+page website site url link address href page",
	"screenshot: screenshot screen+shot screengrab capture snapshot",
	"image: image picture photo png jpeg jpg icon graphic screenshot",
	"tab: tab window",
	"console: console devtools",
	"network: network http traffic",
	"element: element button selector",
	"form: form field",
	"time: time clock hour date now today",
	"timezone: timezone time+zone tz utc",
	"database: database db sql table schema column row record",
	"row: row record entry item",
	"schema: schema columns describe ddl",
	"email: email mail inbox gmail",
	"calendar: calendar event meeting appointment schedule",
	"location: location place address map maps geocode coordinates latitude longitude nearby",
	"directions: directions route distance travel commute",
	"weather: weather forecast temperature",
	"error: error exception crash failure stacktrace stack+trace traceback",
	"log: log logs history audit",
	"entity: entity entities node",
	"relation: relation relationship connection edge",
	"observation: observation fact note",
	"graph: graph knowledge",
	"env: env environment variable variables envvar",
	"config: config configuration setting settings preference",
	"secret: secret token password credential",
	"payment: payment charge invoice bill billing refund subscription",
	"customer: customer client buyer",
	"product: product price catalog",
	"web: web internet online",
	"documentation: documentation docs manual reference guide",
	"code: code source function class snippet",
	"version: version release tag",
	"package: package dependency module library",
	"test: test tests",
	"cache: cache redis",
	"workflow: workflow pipeline ci job action",
	"notification: notification alert",
	"label: label tag category",
	"status: status state health progress",
	"llm: llm model completion sampling ai",
	"video: video youtube",
	"news: news headline headlines article",
	"note: note notes notebook wiki",
}

// concepts maps a stem (or two stems joined by a space) to the concepts it
// names, each as a term that no word can produce ("~delete").
var concepts = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range conceptGroups {
		name, words, _ := strings.Cut(line, ":")
		term := "~" + name
		for _, w := range strings.Fields(words) {
			parts := strings.Split(w, "+")
			for i, p := range parts {
				if !stopWords[p] {
					parts[i] = stem(p)
				}
			}
			key := strings.Join(parts, " ")
			if !containsString(m[key], term) {
				m[key] = append(m[key], term)
			}
		}
	}
	return m
}()

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// appendConcepts appends to out the concepts named by each stem and by each
// pair of neighbouring stems. Stems holds every word, stop words included, so
// that phrases such as "log in" and "look up" are seen; a stop word alone
// names no concept.
func appendConcepts(out, stems []string) []string {
	for i, s := range stems {
		if !stopWords[s] {
			out = append(out, concepts[s]...)
		}
		if i+1 < len(stems) {
			if c, ok := concepts[s+" "+stems[i+1]]; ok {
				out = append(out, c...)
			}
		}
	}
	return out
}
