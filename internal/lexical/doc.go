// Package lexical is contextasm's built-in relevance: a lexical scorer of
// the BM25 family that says, with a number in [0, 1], how much a block's
// text is about a query. No model and no network: Unicode-aware word
// splitting, case folding, a light English stemmer and character bigrams
// for scripts written without spaces.
//
// # Analysis
//
// [Analyze] turns a text into a [Doc], once, when the block is declared:
// its terms, each as a 48-bit key with its frequency, and its length.
// [Tokens] shows the terms as text. The splitter reads Unicode categories
// (Go's tables): letters, marks and numbers make words; case is folded;
// a word is split at hyphens, underscores and camelCase boundaries and
// the compound is a term too ("feeAmount", "fee_amount" and "fee-amount"
// all give fee, amount, feeamount); an English clitic after an apostrophe
// is dropped ("Caroline's" is caroline); 130 English stop words are left
// out; ASCII words go through the first step of Porter2 (plurals, -ed,
// -ing, final y); Han, Hiragana, Katakana, Thai, Lao, Khmer and Myanmar
// letters are indexed as overlapping bigrams of characters. Emoji and
// other symbols are not terms. See docs/relevance.md.
//
// # Scoring
//
// Statistics (the number of documents N, their average length, each
// term's document frequency) are those of the documents the request can
// see, and only those: an [Index] is meant to hold exactly one request
// shape's eligible blocks (the engine keeps one per shape, beside the
// ranking it keeps per shape, and adds and removes a block's Doc as the
// block enters and leaves), so another tenant's blocks are not in it and
// cannot move its statistics, and no visibility test runs per posting. [Scan] computes
// the same scores from scratch over a list of documents, for an assembly
// that has no index; the two agree bit for bit (TestIndexMatchesScan).
//
// The relevance of a document d to a query q of distinct terms t is
//
//	BM25(d, q) = Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len(d)/avglen))
//	idf(t)     = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//	relevance  = BM25(d, q) / Σ_{t scored} idf(t)·(k1+1)
//
// with k1 = 1.2 and b = 0.75 ([DefaultParams]): BM25 divided by the most
// a document could score for the query's scored terms, so it lies in
// [0, 1), 0 for a document with none of them. A term is scored when it
// occurs, in at most half of the documents or in no more than 64 of them:
// a term most of many documents hold is a stop word of that set (its idf
// is under ln 2), and reading its postings would cost a query the set.
//
// # Performance
//
// Analysis is linear in the text: one pass over its characters, with
// scratch bounded by [MaxTermBytes] whatever the input
// (BenchmarkAnalyzeHostile). A query costs its terms' postings: the
// documents that hold one of its terms (and at most as many removed ones
// not yet compacted), never the whole index (BenchmarkIndexScore).
// [Index.ScoreTop] is for a caller that keeps only the k most relevant:
// it accumulates as Score does, then keeps the k largest sums in a heap
// on one pass over the documents touched, and returns those at or above
// the k-th largest relevance (ties included) with Score's bits, so that
// a common term costs its postings but not a hit per document
// (TestScoreTopMatchesScore). When the query's lists are long, ScoreTop
// reads them in runs of one class (of frequency and document length),
// highest bound first, and stops once no document untouched can be among
// the k (prune.go), scoring again exactly those touched that might.
// [Index.Score], [Index.ScoreTop] and
// [Query.Set] allocate nothing once their buffers have grown
// (TestScoreAllocs).
package lexical
