import json, hashlib, collections
out='/work/wt/h28/testdata/search/public/'
def split(q):
    # Half of each set, by a hash of the request: "tune" may be looked at while tuning, "held-out" never.
    return 'held-out' if hashlib.sha256(q.encode()).digest()[0] % 2 else 'tune'

# Azure MCP Server (microsoft/mcp, ToolDescriptionEvaluator)
t=json.load(open('/tmp/h28/az-tools.json'))['results']
tools=[]
for x in t:
    props={}; req=[]
    for o in x.get('option') or []:
        n=o['name'].lstrip('-')
        p={'type': o.get('type') or 'string', 'description': o.get('description') or ''}
        props[n]=p
        if o.get('required'): req.append(n)
    schema={'type':'object','properties':props}
    if req: schema['required']=req
    tools.append({'name': x['command'].replace(' ','_'), 'description': x['description'], 'inputSchema': schema})
names={x['name'] for x in tools}
json.dump({'server':'azure','source':'github.com/microsoft/mcp eng/tools/ToolDescriptionEvaluator/tools.json','commit':'2c930f6f591f94a1b52a2fecc26fe0f076ce38fa','license':'MIT','tools':tools}, open(out+'azure-tools.json','w'), indent=1, ensure_ascii=False)
p=json.load(open('/tmp/h28/az-prompts.json'))
qs=[]; seen=set()
for tool, prompts in p.items():
    if tool not in names: continue
    for q in prompts:
        if q in seen: continue
        seen.add(q)
        qs.append({'query':q,'expect':['azure/'+tool],'split':split(q)})
json.dump(qs, open(out+'azure-queries.json','w'), indent=1, ensure_ascii=False)
print('azure', len(tools), len(qs), collections.Counter(x['split'] for x in qs))

# mcpproxy's Spec 065 retrieval golden set
c=json.load(open('/tmp/h28/mp-corpus.json'))['tools']
servers=collections.OrderedDict()
for x in c:
    servers.setdefault(x['server'],[]).append({'name':x['tool'],'description':x['description']})
json.dump({'source':'github.com/smart-mcp-proxy/mcpproxy-go specs/065-evaluation-foundation/datasets/corpus_v1.json','commit':'50db38ae3955e5771365089e9c7ad8e42f2d001a','license':'MIT','servers':[{'server':s,'tools':v} for s,v in servers.items()]}, open(out+'mcpproxy-tools.json','w'), indent=1, ensure_ascii=False)
g=json.load(open('/tmp/h28/mp-golden.json'))['queries']
qs=[]
for q in g:
    exp=[l['tool_id'].replace(':','/') for l in q['labels'] if l['relevance']>=1]
    qs.append({'query':q['query'],'expect':exp,'split':split(q['query'])})
json.dump(qs, open(out+'mcpproxy-queries.json','w'), indent=1, ensure_ascii=False)
print('mcpproxy', len(c), len(qs), collections.Counter(x['split'] for x in qs))
