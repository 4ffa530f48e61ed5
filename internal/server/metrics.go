package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/outcome"
)

// metrics are the server's Prometheus metrics, on a registry of its own
// (no global state). No metric has a tenant label: /metrics is not
// authenticated, and a tenant's name and traffic are its own business.
type metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec   // route, code
	latency      *prometheus.HistogramVec // route
	assemblies   *prometheus.CounterVec   // format, outcome
	engineTime   *prometheus.HistogramVec // format
	tokens       prometheus.Histogram
	excluded     *prometheus.CounterVec // reason
	dropped      *prometheus.CounterVec // reason
	feedbacks    *prometheus.CounterVec // outcome
	overloaded   prometheus.Counter
	stateStatus  *prometheus.Desc
	stateQueued  *prometheus.Desc
	stateRefused *prometheus.Desc
	s            *Server
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), s: s}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "contextasm_http_requests_total",
		Help: "HTTP requests answered, by route and status code."}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "contextasm_http_request_duration_seconds",
		Help:    "Time to answer a successful request, by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}, []string{"route"})
	m.assemblies = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "contextasm_assemblies_total",
		Help: "Assemblies, by format and outcome (ok, budget_too_small, invalid, error)."}, []string{"format", "outcome"})
	m.engineTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "contextasm_assembly_duration_seconds",
		Help:    "The engine's time per assembly, by format.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}}, []string{"format"})
	m.tokens = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "contextasm_assembly_tokens",
		Help: "Tokens of an assembled context.", Buckets: prometheus.ExponentialBuckets(64, 2, 12)})
	m.excluded = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "contextasm_excluded_blocks_total",
		Help: "Blocks hidden from a request (another session's or user's, a role it lacks), by reason."}, []string{"reason"})
	m.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "contextasm_dropped_blocks_total",
		Help: "Blocks dropped or cut, by kind and reason, of the assemblies whose events were read (a dump, its blocks, a feedback)."}, []string{"kind", "reason"})
	m.feedbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "contextasm_feedback_total",
		Help: "Feedback requests, by outcome (ok, violation, error)."}, []string{"outcome"})
	m.overloaded = prometheus.NewCounter(prometheus.CounterOpts{Name: "contextasm_overloaded_total",
		Help: "Requests refused because --max-concurrent assemblies were running."})
	m.stateStatus = prometheus.NewDesc("contextasm_state_stores", "Tenants' learned-state stores, by status (ok, unavailable).", []string{"status"}, nil)
	m.stateQueued = prometheus.NewDesc("contextasm_state_queued_deltas", "Learned-state deltas waiting for their stores, all tenants.", nil, nil)
	m.stateRefused = prometheus.NewDesc("contextasm_state_rejected_deltas_total", "Learned-state deltas refused because a queue was full, all tenants.", nil, nil)
	m.reg.MustRegister(m.requests, m.latency, m.assemblies, m.engineTime, m.tokens, m.excluded, m.dropped, m.feedbacks, m.overloaded, m,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Describe and Collect make the state stores' status a collector, read at
// each scrape.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.stateStatus
	ch <- m.stateQueued
	ch <- m.stateRefused
}

func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	var ok, down, queued int
	var rejected uint64
	for _, t := range m.s.tenants {
		if t.store == nil {
			continue
		}
		st := t.eng.StateStatus()
		if st.Err != nil {
			down++
		} else {
			ok++
		}
		queued += st.Queued
		rejected += st.Rejected
	}
	ch <- prometheus.MustNewConstMetric(m.stateStatus, prometheus.GaugeValue, float64(ok), "ok")
	ch <- prometheus.MustNewConstMetric(m.stateStatus, prometheus.GaugeValue, float64(down), "unavailable")
	ch <- prometheus.MustNewConstMetric(m.stateQueued, prometheus.GaugeValue, float64(queued))
	ch <- prometheus.MustNewConstMetric(m.stateRefused, prometheus.CounterValue, float64(rejected))
}

func (m *metrics) request(route string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	if took > 0 {
		m.latency.WithLabelValues(route).Observe(took.Seconds())
	}
}

// assembled counts an assembly.
func (m *metrics) assembled(format string, res *contextasm.Result, err error, took time.Duration) {
	if format == "" {
		format = "text"
	}
	switch {
	case err == nil:
		m.assemblies.WithLabelValues(format, "ok").Inc()
		m.engineTime.WithLabelValues(format).Observe(took.Seconds())
		m.tokens.Observe(float64(res.TotalTokens))
		for reason, n := range res.ExcludedCounts {
			m.excluded.WithLabelValues(string(reason)).Add(float64(n))
		}
	case errors.Is(err, contextasm.ErrBudgetTooSmall):
		m.assemblies.WithLabelValues(format, "budget_too_small").Inc()
	case errors.Is(err, contextasm.ErrInvalid):
		m.assemblies.WithLabelValues(format, "invalid").Inc()
	default:
		m.assemblies.WithLabelValues(format, "error").Inc()
	}
}

// events counts an assembly's dropped and cut blocks.
func (m *metrics) events(events []outcome.Event) {
	for _, ev := range events {
		if ev.Kind == outcome.KindDropped || ev.Kind == outcome.KindCut {
			m.dropped.WithLabelValues(string(ev.Kind), string(ev.Reason)).Inc()
		}
	}
}

func (m *metrics) feedback(outcome string) { m.feedbacks.WithLabelValues(outcome).Inc() }
