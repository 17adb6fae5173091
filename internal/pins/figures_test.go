package pins

// realFalsePositives is the figure of docs/pinning.md: tools of the captured real
// servers that screening flags although they are honest: GitHub's
// label_write, whose description says to use the 'update_issue' tool,
// which (with all 16 configured) is Sentry's.
const realFalsePositives = 1
