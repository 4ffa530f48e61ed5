package lexical

// isStopWord reports whether w, lowercase, is an English stop word: the
// words of NLTK's English list that have no apostrophe, less the pieces
// the splitter never leaves (the clitics d, ll, m, re, ve, and o, y, ma)
// and the remains of negative contractions it no longer makes ("don",
// "won", "isn": "don't" is "do", "isn't" is "is"), plus the four it does
// make ("can't" is "ca", "won't" "wo", "shan't" "sha", "ain't" "ai"):
// 130 words. They carry no topic, and dropping them keeps a question's
// terms to what it is about: "When did Caroline go to the support group?"
// is caroline, go, support, group. The list is short on purpose: IDF
// already discounts what is common in a conversation, and a longer list
// drops words ("first", "never", "help") that questions are about.
func isStopWord(w []byte) bool {
	if len(w) > 10 {
		return false
	}
	switch string(w) {
	case "a", "about", "above", "after", "again", "against", "all", "am", "an", "and",
		"any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
		"between", "both", "but", "by", "can", "did", "do", "does", "doing", "down",
		"during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
		"he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i",
		"if", "in", "into", "is", "it", "its", "itself", "just", "me", "more",
		"most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
		"once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
		"same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
		"theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through",
		"to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
		"when", "where", "which", "while", "who", "whom", "why", "will", "with", "you",
		"your", "yours", "yourself", "yourselves", "s", "t",
		// What "can't", "won't", "shan't" and "ain't" leave.
		"ca", "wo", "sha", "ai":
		return true
	}
	return false
}
