// Package stats answers the statistics use cases — trends, flaky scenarios, heal statistics and
// insights — over the runs and scenario results of a scope. Every figure is computed by SQL
// (queries/stats.sql) over indexed tables; this package resolves the scope and window, checks the
// parameters and shapes the answer. The metrics and their formulas are in docs/stats.md.
package stats

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
)

// DefaultWindow is the window when the caller names no start.
const DefaultWindow = 30 * 24 * time.Hour

// MaxWindow is the longest window a statistic covers.
const MaxWindow = 366 * 24 * time.Hour

// Querier is the part of the generated queries the service uses.
type Querier interface {
	StatsTrendRuns(ctx context.Context, arg db.StatsTrendRunsParams) ([]db.StatsTrendRunsRow, error)
	StatsTrendScenarios(ctx context.Context, arg db.StatsTrendScenariosParams) ([]db.StatsTrendScenariosRow, error)
	StatsTrendSummary(ctx context.Context, arg db.StatsTrendSummaryParams) (db.StatsTrendSummaryRow, error)
	StatsFlaky(ctx context.Context, arg db.StatsFlakyParams) ([]db.StatsFlakyRow, error)
	StatsFlakyRollup(ctx context.Context, arg db.StatsFlakyRollupParams) ([]db.StatsFlakyRollupRow, error)
	StatsVersions(ctx context.Context, arg db.StatsVersionsParams) (string, error)
	StatsRollupSettle(ctx context.Context, arg db.StatsRollupSettleParams) (int32, error)
	StatsHealByStrategy(ctx context.Context, arg db.StatsHealByStrategyParams) ([]db.StatsHealByStrategyRow, error)
	StatsHealBySelector(ctx context.Context, arg db.StatsHealBySelectorParams) ([]db.StatsHealBySelectorRow, error)
	StatsHealByScenario(ctx context.Context, arg db.StatsHealByScenarioParams) ([]db.StatsHealByScenarioRow, error)
	StatsHealTop(ctx context.Context, arg db.StatsHealTopParams) ([]db.StatsHealTopRow, error)
	StatsHealByStrategyRollup(ctx context.Context, arg db.StatsHealByStrategyRollupParams) ([]db.StatsHealByStrategyRollupRow, error)
	StatsHealBySelectorRollup(ctx context.Context, arg db.StatsHealBySelectorRollupParams) ([]db.StatsHealBySelectorRollupRow, error)
	StatsHealByScenarioRollup(ctx context.Context, arg db.StatsHealByScenarioRollupParams) ([]db.StatsHealByScenarioRollupRow, error)
	StatsHealTopRollup(ctx context.Context, arg db.StatsHealTopRollupParams) ([]db.StatsHealTopRollupRow, error)
	StatsSlowestScenarios(ctx context.Context, arg db.StatsSlowestScenariosParams) ([]db.StatsSlowestScenariosRow, error)
	StatsSlowestSteps(ctx context.Context, arg db.StatsSlowestStepsParams) ([]db.StatsSlowestStepsRow, error)
	StatsDurationRegressions(ctx context.Context, arg db.StatsDurationRegressionsParams) ([]db.StatsDurationRegressionsRow, error)
	StatsMostFailingSteps(ctx context.Context, arg db.StatsMostFailingStepsParams) ([]db.StatsMostFailingStepsRow, error)
	StatsFailureClusters(ctx context.Context, arg db.StatsFailureClustersParams) ([]db.StatsFailureClustersRow, error)
	StatsNewFailures(ctx context.Context, arg db.StatsNewFailuresParams) ([]db.StatsNewFailuresRow, error)
	StatsBecameFlaky(ctx context.Context, arg db.StatsBecameFlakyParams) ([]db.StatsBecameFlakyRow, error)
	StatsTrendRunsRollup(ctx context.Context, arg db.StatsTrendRunsRollupParams) ([]db.StatsTrendRunsRollupRow, error)
	StatsTrendScenariosRollup(ctx context.Context, arg db.StatsTrendScenariosRollupParams) ([]db.StatsTrendScenariosRollupRow, error)
	StatsTrendSummaryRollup(ctx context.Context, arg db.StatsTrendSummaryRollupParams) (db.StatsTrendSummaryRollupRow, error)
	StatsDurationsRollup(ctx context.Context, arg db.StatsDurationsRollupParams) ([]db.StatsDurationsRollupRow, error)
	StatsSlowestStepsRollup(ctx context.Context, arg db.StatsSlowestStepsRollupParams) ([]db.StatsSlowestStepsRollupRow, error)
	StatsMostFailingStepsRollup(ctx context.Context, arg db.StatsMostFailingStepsRollupParams) ([]db.StatsMostFailingStepsRollupRow, error)
	StatsFailureClustersRollup(ctx context.Context, arg db.StatsFailureClustersRollupParams) ([]db.StatsFailureClustersRollupRow, error)
	StatsBecameFlakyRollup(ctx context.Context, arg db.StatsBecameFlakyRollupParams) ([]db.StatsBecameFlakyRollupRow, error)
	UserWorkspaceIDs(ctx context.Context, userID uuid.UUID) ([]uuid.UUID, error)
}

// Service computes statistics.
type Service struct {
	q     Querier
	now   func() time.Time
	flaky *flakyCache
}

// New returns a service reading through q.
func New(q Querier) *Service {
	return &Service{q: q, now: time.Now, flaky: newFlakyCache(FlakyCacheEntries)}
}

// Workspaces are the workspaces user belongs to: what a Scope of someone other than an instance
// admin is bounded by.
func (s *Service) Workspaces(ctx context.Context, user uuid.UUID) ([]uuid.UUID, error) {
	return s.q.UserWorkspaceIDs(ctx, user)
}

// Scope is what a statistic covers: the caller's workspaces and the filters of the request.
type Scope struct {
	// AllWorkspaces is set for instance admins; otherwise WorkspaceIDs bounds what is seen.
	AllWorkspaces bool
	WorkspaceIDs  []uuid.UUID
	Workspace     *uuid.UUID
	Project       *string
	Branch        *string
	Environment   *string
	Trigger       *string
	Tag           *string
	Since, Until  *time.Time
}

// window resolves [since, until): until defaults to the end of the current UTC day, since to
// DefaultWindow before it.
func (s *Service) window(sc Scope) (time.Time, time.Time, error) {
	// By default the window is whole UTC days: up to the end of today.
	until := s.now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	if sc.Until != nil {
		until = sc.Until.UTC()
	}
	since := until.Add(-DefaultWindow)
	if sc.Since != nil {
		since = sc.Since.UTC()
	}
	if !since.Before(until) {
		return since, until, apierr.New(apierr.ValidationFailed, "the window is empty", "query parameters since and until: since must be before until")
	}
	if until.Sub(since) > MaxWindow {
		return since, until, apierr.New(apierr.ValidationFailed, "the window is longer than 366 days", "query parameters since and until: narrow the window")
	}
	return since, until, nil
}

// rollup reports whether the daily rollup answers for the scope over [since, until): both bounds
// are UTC midnights and no filter names something the rollup does not keep (branch, environment,
// trigger, tag).
func (sc Scope) rollup(since, until time.Time) bool {
	whole := func(t time.Time) bool { return t.Equal(t.Truncate(24 * time.Hour)) }
	return whole(since) && whole(until) && sc.Branch == nil && sc.Environment == nil && sc.Trigger == nil && sc.Tag == nil
}

// settle applies the runs of the scope still pending in the rollup (rollup.go) before the rollup
// answers: a read after a run's finish sees it, whether or not its job has run yet.
func (s *Service) settle(ctx context.Context, sc Scope) error {
	_, err := s.q.StatsRollupSettle(ctx, db.StatsRollupSettleParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
		Workspace: sc.workspace(), Project: sc.Project})
	return err
}

// day is the UTC date of a UTC midnight.
func day(t time.Time) pgtype.Date { return pgtype.Date{Time: t.UTC(), Valid: true} }

func (sc Scope) ids() []uuid.UUID {
	if sc.WorkspaceIDs == nil {
		return []uuid.UUID{}
	}
	return sc.WorkspaceIDs
}

func (sc Scope) workspace() uuid.NullUUID {
	if sc.Workspace == nil {
		return uuid.NullUUID{}
	}
	return uuid.NullUUID{UUID: *sc.Workspace, Valid: true}
}

// nan maps SQL's "no value" sentinel (NaN) to null.
func nan(f float64) *float64 {
	if math.IsNaN(f) {
		return nil
	}
	return &f
}

func row(r int32) *int {
	if r < 0 {
		return nil
	}
	v := int(r)
	return &v
}

func ref(identity, project, featurePath, scenario string, exampleRow int32) serverapi.ScenarioRef {
	return serverapi.ScenarioRef{Identity: identity, Project: project, FeaturePath: featurePath, Scenario: scenario, ExampleRow: row(exampleRow)}
}

// Trends buckets run and scenario outcomes by hour, day or week in the time zone tz, and compares
// the window's totals with those of the previous window of the same length.
func (s *Service) Trends(ctx context.Context, sc Scope, bucket, tz string) (serverapi.Trends, error) {
	var out serverapi.Trends
	since, until, err := s.window(sc)
	if err != nil {
		return out, err
	}
	if bucket == "" {
		bucket = "day"
	}
	if tz == "" {
		tz = "UTC"
	}
	if _, err := time.LoadLocation(tz); err != nil || tz == "Local" || strings.ContainsAny(tz, " ,") {
		return out, apierr.New(apierr.ValidationFailed, "unknown time zone "+tz, "query parameter tz: an IANA time zone name such as Europe/Paris")
	}
	// Day and week buckets in UTC over whole days come from the daily rollup (docs/stats.md).
	roll := sc.rollup(since.Add(-until.Sub(since)), until) && tz == "UTC" && (bucket == "day" || bucket == "week")
	if roll {
		if err := s.settle(ctx, sc); err != nil {
			return out, err
		}
	}
	var runs []db.StatsTrendRunsRow
	if roll {
		rows, err := s.q.StatsTrendRunsRollup(ctx, db.StatsTrendRunsRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, SinceDay: day(since), UntilDay: day(until), Bucket: bucket})
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			runs = append(runs, db.StatsTrendRunsRow(r))
		}
	} else {
		runs, err = s.q.StatsTrendRuns(ctx, db.StatsTrendRunsParams{Tz: tz, Bucket: bucket, AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
			Workspace: sc.workspace(), Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
		if err != nil {
			return out, err
		}
	}
	var scen []db.StatsTrendScenariosRow
	if roll {
		rows, err := s.q.StatsTrendScenariosRollup(ctx, db.StatsTrendScenariosRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, SinceDay: day(since), UntilDay: day(until), Bucket: bucket})
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			scen = append(scen, db.StatsTrendScenariosRow(r))
		}
	} else {
		scen, err = s.q.StatsTrendScenarios(ctx, db.StatsTrendScenariosParams{Tz: tz, Bucket: bucket, AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
			Workspace: sc.workspace(), Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
		if err != nil {
			return out, err
		}
	}
	byAt := map[time.Time]db.StatsTrendScenariosRow{}
	for _, r := range scen {
		byAt[r.At.UTC()] = r
	}
	out = serverapi.Trends{Bucket: serverapi.TrendsBucket(bucket), TimeZone: tz, Window: serverapi.StatsWindow{Since: since, Until: until}, Points: []serverapi.TrendPoint{}}
	for _, r := range runs {
		p := serverapi.TrendPoint{At: r.At.UTC(), Runs: int(r.Runs), Passed: int(r.Passed), Failed: int(r.Failed), Errored: int(r.Errored),
			Cancelled: int(r.Cancelled), TimedOut: int(r.TimedOut), RunDurationP50Ms: nan(r.RunP50Ms), RunDurationP95Ms: nan(r.RunP95Ms)}
		if fin := r.Runs - r.Cancelled; fin > 0 {
			p.PassRate = ptr(float64(r.Passed) / float64(fin))
		}
		if c, ok := byAt[r.At.UTC()]; ok {
			p.Scenarios = serverapi.Counts{Total: int(c.Total), Passed: int(c.Passed), Failed: int(c.Failed), Skipped: int(c.Skipped),
				Pending: int(c.Pending), Undefined: int(c.Undefined), Flaky: int(c.Flaky)}
			p.ScenarioDurationP50Ms, p.ScenarioDurationP95Ms, p.Flaky = nan(c.P50Ms), nan(c.P95Ms), int(c.Flaky)
		}
		out.Points = append(out.Points, p)
	}
	summary := func(from, to time.Time) (serverapi.TrendSummary, error) {
		var r db.StatsTrendSummaryRow
		var err error
		if roll {
			var rr db.StatsTrendSummaryRollupRow
			rr, err = s.q.StatsTrendSummaryRollup(ctx, db.StatsTrendSummaryRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
				Workspace: sc.workspace(), Project: sc.Project, SinceDay: day(from), UntilDay: day(to)})
			r = db.StatsTrendSummaryRow(rr)
		} else {
			r, err = s.q.StatsTrendSummary(ctx, db.StatsTrendSummaryParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
				Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: from, Until: to, Tag: sc.Tag})
		}
		if err != nil {
			return serverapi.TrendSummary{}, err
		}
		t := serverapi.TrendSummary{Runs: int(r.Runs), Scenarios: int(r.Scenarios), ScenarioFailures: int(r.ScenarioFailures), Flaky: int(r.Flaky),
			RunDurationP95Ms: nan(r.RunP95Ms)}
		if r.Finished > 0 {
			t.PassRate = ptr(float64(r.Passed) / float64(r.Finished))
		}
		return t, nil
	}
	if out.Summary, err = summary(since, until); err != nil {
		return out, err
	}
	if out.Previous, err = summary(since.Add(-until.Sub(since)), since); err != nil {
		return out, err
	}
	out.Change = serverapi.TrendChange{Runs: out.Summary.Runs - out.Previous.Runs, ScenarioFailures: out.Summary.ScenarioFailures - out.Previous.ScenarioFailures,
		Flaky: out.Summary.Flaky - out.Previous.Flaky, PassRate: diff(out.Summary.PassRate, out.Previous.PassRate),
		RunDurationP95Ms: diff(out.Summary.RunDurationP95Ms, out.Previous.RunDurationP95Ms)}
	return out, nil
}

func diff(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	return ptr(*a - *b)
}

func ptr[T any](v T) *T { return &v }

// FlakyQuery are the parameters of Flaky besides the scope.
type FlakyQuery struct {
	MinResults     int
	MaxFailedShare *float64
	FlakyOnly      bool
	Sort           string
	Descending     bool
	Offset, Limit  int
}

// Flaky lists scenario identities with their flakiness metrics, one page, and whether more follow.
func (s *Service) Flaky(ctx context.Context, sc Scope, fq FlakyQuery) ([]serverapi.FlakyScenario, bool, error) {
	p, err := s.FlakyPage(ctx, sc, fq)
	return p.Items, p.More, err
}

// FlakyPage is Flaky with the cache's memo of the encoded page (docs/stats.md, "Caching").
func (s *Service) FlakyPage(ctx context.Context, sc Scope, fq FlakyQuery) (FlakyPage, error) {
	since, until, err := s.window(sc)
	if err != nil {
		return FlakyPage{}, err
	}
	if fq.MinResults < 2 {
		fq.MinResults = 10
	}
	if fq.Sort == "" {
		fq.Sort = "flakyRate"
	}
	share := pgtype.Float8{}
	if fq.MaxFailedShare != nil {
		share = pgtype.Float8{Float64: *fq.MaxFailedShare, Valid: true}
	}
	var rows []db.StatsFlakyRow
	var key, versions string
	cached := sc.rollup(since, until) && fq.MaxFailedShare == nil
	if cached {
		// Read the versions before the answer: a change committed in between leaves the entry
		// with the older versions, so it is recomputed on the next request, never kept stale.
		key = flakyKey(sc, since, until, fq)
		if err := s.settle(ctx, sc); err != nil {
			return FlakyPage{}, err
		}
		if versions, err = s.q.StatsVersions(ctx, db.StatsVersionsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
			Workspace: sc.workspace(), Project: sc.Project}); err != nil {
			return FlakyPage{}, err
		}
		if p, ok := s.flaky.get(key, versions); ok {
			return p, nil
		}
	}
	if cached {
		// Whole UTC days without run or tag filters: the daily rollup has every figure (docs/stats.md).
		days, err := s.q.StatsFlakyRollup(ctx, db.StatsFlakyRollupParams{SinceDay: day(since), UntilDay: day(until), Descending: fq.Descending,
			AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(), Project: sc.Project,
			MinResults: int32(fq.MinResults), FlakyOnly: fq.FlakyOnly, Sort: fq.Sort, RowOffset: int32(fq.Offset), RowLimit: int32(fq.Limit + 1)})
		if err != nil {
			return FlakyPage{}, err
		}
		rows = make([]db.StatsFlakyRow, len(days))
		for i, d := range days {
			rows[i] = db.StatsFlakyRow{ProjectID: d.ProjectID, Identity: ptr(d.Identity), Project: d.Project, FeaturePath: d.FeaturePath,
				Scenario: d.Scenario, ExampleRow: d.ExampleRow, LastRunID: d.LastRunID, Results: d.Results, Passed: d.Passed, Flips: d.Flips,
				RetryPasses: d.RetryPasses, FlakyResults: d.FlakyResults, FlipRate: d.FlipRate, FlakyRate: d.FlakyRate, RetryPassRate: d.RetryPassRate,
				FailureRate: d.FailureRate, PassRate: d.PassRate, Health: d.Health, Volume: d.Volume, DurationLostMs: d.DurationLostMs,
				FirstFlakyAt: d.FirstFlakyAt, LastFlakyAt: d.LastFlakyAt, Heals: d.Heals, StepKeyword: d.StepKeyword, StepText: d.StepText,
				StepCount: d.StepCount, Locator: d.Locator, LocatorCount: d.LocatorCount}
		}
	} else {
		rows, err = s.q.StatsFlaky(ctx, db.StatsFlakyParams{Since: since, Until: until, Descending: fq.Descending, AllWorkspaces: sc.AllWorkspaces,
			WorkspaceIds: sc.ids(), Workspace: sc.workspace(), Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger,
			Tag: sc.Tag, MaxFailedShare: share, MinResults: int32(fq.MinResults), FlakyOnly: fq.FlakyOnly, Sort: fq.Sort,
			RowOffset: int32(fq.Offset), RowLimit: int32(fq.Limit + 1)})
		if err != nil {
			return FlakyPage{}, err
		}
	}
	more := len(rows) > fq.Limit
	if more {
		rows = rows[:fq.Limit]
	}
	out := make([]serverapi.FlakyScenario, 0, len(rows))
	for _, r := range rows {
		low, high := Wilson(r.Results-r.Passed, r.Results)
		f := serverapi.FlakyScenario{Identity: deref(r.Identity), Project: r.Project, FeaturePath: r.FeaturePath, Scenario: r.Scenario,
			ExampleRow: row(r.ExampleRow), Results: int(r.Results), Passed: int(r.Passed), Failed: int(r.Results - r.Passed), Flips: int(r.Flips),
			RetryPasses: int(r.RetryPasses), FlakyResults: int(r.FlakyResults), FlipRate: r.FlipRate, FlakyRate: r.FlakyRate,
			RetryPassRate: r.RetryPassRate, FailureRate: r.FailureRate, PassRate: r.PassRate, Health: r.Health, FlakinessVolume: r.Volume,
			DurationLostMs: r.DurationLostMs, FailureRateLow: low, FailureRateHigh: high, Heals: int(r.Heals), LastRunId: r.LastRunID}
		if !r.FirstFlakyAt.Equal(time.Unix(0, 0)) {
			f.FirstFlakyAt, f.LastFlakyAt = ptr(r.FirstFlakyAt.UTC()), ptr(r.LastFlakyAt.UTC())
		}
		if r.StepCount > 0 {
			f.FailingStep = &serverapi.StepCount{Keyword: r.StepKeyword, Text: r.StepText, Count: int(r.StepCount)}
		}
		if r.LocatorCount > 0 {
			f.FailingLocator = &serverapi.LocatorCount{Count: int(r.LocatorCount), Locator: r.Locator}
		}
		out = append(out, f)
	}
	if cached {
		return s.flaky.put(key, versions, out, more), nil
	}
	return FlakyPage{Items: out, More: more}, nil
}

// Wilson is the Wilson score interval at 95 % of failures out of n results.
func Wilson(failures, n int64) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p, nf := float64(failures)/float64(n), float64(n)
	d := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / d
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return math.Max(0, c-h), math.Min(1, c+h)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Heal reports the heals recorded in the window's results by strategy, selector and scenario,
// and the selectors healed most with their replacements.
func (s *Service) Heal(ctx context.Context, sc Scope) (serverapi.HealStats, error) {
	var out serverapi.HealStats
	since, until, err := s.window(sc)
	if err != nil {
		return out, err
	}
	roll := sc.rollup(since, until) // whole UTC days: the daily rollup answers (docs/stats.md)
	if roll {
		if err := s.settle(ctx, sc); err != nil {
			return out, err
		}
	}
	out = serverapi.HealStats{Window: serverapi.StatsWindow{Since: since, Until: until}, ByStrategy: []serverapi.HealStrategyCount{},
		BySelector: []serverapi.HealSelectorCount{}, ByScenario: []serverapi.HealScenarioCount{}, Top: []serverapi.HealReplacement{}}
	var strategies []db.StatsHealByStrategyRow
	if roll {
		rows, err := s.q.StatsHealByStrategyRollup(ctx, db.StatsHealByStrategyRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, SinceDay: day(since), UntilDay: day(until)})
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			strategies = append(strategies, db.StatsHealByStrategyRow(r))
		}
	} else {
		strategies, err = s.q.StatsHealByStrategy(ctx, db.StatsHealByStrategyParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
		if err != nil {
			return out, err
		}
	}
	for _, r := range strategies {
		out.Total += int(r.Count)
		out.ByStrategy = append(out.ByStrategy, serverapi.HealStrategyCount{Strategy: r.Strategy, Count: int(r.Count), AvgScore: r.AvgScore})
	}
	var selectors []db.StatsHealBySelectorRow
	if roll {
		rows, err := s.q.StatsHealBySelectorRollup(ctx, db.StatsHealBySelectorRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, SinceDay: day(since), UntilDay: day(until)})
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			selectors = append(selectors, db.StatsHealBySelectorRow(r))
		}
	} else {
		selectors, err = s.q.StatsHealBySelector(ctx, db.StatsHealBySelectorParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
		if err != nil {
			return out, err
		}
	}
	for _, r := range selectors {
		out.BySelector = append(out.BySelector, serverapi.HealSelectorCount{Project: r.Project, Selector: r.Selector, Count: int(r.Count)})
	}
	var scenarios []db.StatsHealByScenarioRow
	if roll {
		rows, err := s.q.StatsHealByScenarioRollup(ctx, db.StatsHealByScenarioRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, SinceDay: day(since), UntilDay: day(until)})
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			scenarios = append(scenarios, db.StatsHealByScenarioRow(r))
		}
	} else {
		scenarios, err = s.q.StatsHealByScenario(ctx, db.StatsHealByScenarioParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
		if err != nil {
			return out, err
		}
	}
	for _, r := range scenarios {
		sr := ref(r.Identity, r.Project, r.FeaturePath, r.Scenario, r.ExampleRow)
		out.ByScenario = append(out.ByScenario, serverapi.HealScenarioCount{Identity: sr.Identity, Project: sr.Project, FeaturePath: sr.FeaturePath,
			Scenario: sr.Scenario, ExampleRow: sr.ExampleRow, Count: int(r.Count)})
	}
	var top []db.StatsHealTopRow
	if roll {
		rows, err := s.q.StatsHealTopRollup(ctx, db.StatsHealTopRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, SinceDay: day(since), UntilDay: day(until)})
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			top = append(top, db.StatsHealTopRow(r))
		}
	} else {
		top, err = s.q.StatsHealTop(ctx, db.StatsHealTopParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
			Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
		if err != nil {
			return out, err
		}
	}
	for _, r := range top {
		out.Top = append(out.Top, serverapi.HealReplacement{Project: r.Project, OldSelector: r.OldSelector, NewSelector: r.NewSelector,
			Strategy: r.Strategy, Count: int(r.Count), AvgScore: r.AvgScore, LastSeenAt: r.LastSeenAt.UTC()})
	}
	return out, nil
}

// Insights gathers the window's slowest scenarios and steps, duration regressions against the
// previous window of the same length, the most failing steps, failure clusters, new failures since
// each project's last passed run, and the scenarios that went from stable to flaky.
func (s *Service) Insights(ctx context.Context, sc Scope) (serverapi.Insights, error) {
	var out serverapi.Insights
	since, until, err := s.window(sc)
	if err != nil {
		return out, err
	}
	prev := since.Add(-until.Sub(since))
	roll := sc.rollup(prev, until) // whole UTC days: the daily rollup answers (docs/stats.md)
	if roll {
		if err := s.settle(ctx, sc); err != nil {
			return out, err
		}
	}
	out = serverapi.Insights{GeneratedAt: s.now().UTC(), Window: serverapi.StatsWindow{Since: since, Until: until},
		SlowestScenarios: []serverapi.ScenarioDuration{}, SlowestSteps: []serverapi.StepDuration{}, DurationRegressions: []serverapi.DurationRegression{},
		MostFailingSteps: []serverapi.StepCount{}, FailureClusters: []serverapi.FailureCluster{}, NewFailures: []serverapi.NewFailure{},
		BecameFlaky: []serverapi.ScenarioRef{}}
	// The lists are independent reads: they run concurrently, each filling its own member.
	parts := []func() error{
		func() error {
			var err error
			var slow []db.StatsSlowestScenariosRow
			if roll {
				// One read of the identity-days gives both duration lists.
				rows, err := s.q.StatsDurationsRollup(ctx, db.StatsDurationsRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, SinceDay: day(since), UntilDay: day(until), PreviousDay: day(prev)})
				if err != nil {
					return err
				}
				for _, r := range rows {
					if r.Kind == "regression" {
						out.DurationRegressions = append(out.DurationRegressions, serverapi.DurationRegression{Identity: r.Identity, Project: r.Project,
							FeaturePath: r.FeaturePath, Scenario: r.Scenario, ExampleRow: row(r.ExampleRow), P50Ms: r.P50Ms, PreviousP50Ms: r.PreviousP50Ms,
							DeltaMs: r.P50Ms - r.PreviousP50Ms})
						continue
					}
					slow = append(slow, db.StatsSlowestScenariosRow{Identity: r.Identity, Project: r.Project, FeaturePath: r.FeaturePath, Scenario: r.Scenario,
						ExampleRow: r.ExampleRow, Results: r.Results, P50Ms: r.P50Ms, P95Ms: r.P95Ms})
				}
			} else {
				slow, err = s.q.StatsSlowestScenarios(ctx, db.StatsSlowestScenariosParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
				if err != nil {
					return err
				}
			}
			for _, r := range slow {
				out.SlowestScenarios = append(out.SlowestScenarios, serverapi.ScenarioDuration{Identity: r.Identity, Project: r.Project, FeaturePath: r.FeaturePath,
					Scenario: r.Scenario, ExampleRow: row(r.ExampleRow), Results: int(r.Results), P50Ms: r.P50Ms, P95Ms: r.P95Ms})
			}
			return nil
		},
		func() error {
			var err error
			var steps []db.StatsSlowestStepsRow
			if roll {
				rows, err := s.q.StatsSlowestStepsRollup(ctx, db.StatsSlowestStepsRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, SinceDay: day(since), UntilDay: day(until)})
				if err != nil {
					return err
				}
				for _, r := range rows {
					steps = append(steps, db.StatsSlowestStepsRow(r))
				}
			} else {
				steps, err = s.q.StatsSlowestSteps(ctx, db.StatsSlowestStepsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
				if err != nil {
					return err
				}
			}
			for _, r := range steps {
				out.SlowestSteps = append(out.SlowestSteps, serverapi.StepDuration{Keyword: r.Keyword, Text: r.Text, Count: int(r.Count), P50Ms: r.P50Ms, P95Ms: r.P95Ms})
			}
			return nil
		},
		func() error {
			if roll {
				return nil // read with the slowest scenarios (StatsDurationsRollup)
			}
			regs, err := s.q.StatsDurationRegressions(ctx, db.StatsDurationRegressionsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
				Workspace: sc.workspace(), Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since,
				PreviousSince: prev, Until: until, Tag: sc.Tag})
			if err != nil {
				return err
			}
			for _, r := range regs {
				out.DurationRegressions = append(out.DurationRegressions, serverapi.DurationRegression{Identity: r.Identity, Project: r.Project,
					FeaturePath: r.FeaturePath, Scenario: r.Scenario, ExampleRow: row(r.ExampleRow), P50Ms: r.P50Ms, PreviousP50Ms: r.PreviousP50Ms, DeltaMs: r.DeltaMs})
			}
			return nil
		},
		func() error {
			var err error
			var failing []db.StatsMostFailingStepsRow
			if roll {
				rows, err := s.q.StatsMostFailingStepsRollup(ctx, db.StatsMostFailingStepsRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, SinceDay: day(since), UntilDay: day(until)})
				if err != nil {
					return err
				}
				for _, r := range rows {
					failing = append(failing, db.StatsMostFailingStepsRow(r))
				}
			} else {
				failing, err = s.q.StatsMostFailingSteps(ctx, db.StatsMostFailingStepsParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
				if err != nil {
					return err
				}
			}
			for _, r := range failing {
				out.MostFailingSteps = append(out.MostFailingSteps, serverapi.StepCount{Keyword: r.Keyword, Text: r.Text, Count: int(r.Count)})
			}
			return nil
		},
		func() error {
			var err error
			var clusters []db.StatsFailureClustersRow
			if roll {
				rows, err := s.q.StatsFailureClustersRollup(ctx, db.StatsFailureClustersRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, SinceDay: day(since), UntilDay: day(until), PreviousDay: day(prev)})
				if err != nil {
					return err
				}
				for _, r := range rows {
					clusters = append(clusters, db.StatsFailureClustersRow(r))
				}
			} else {
				clusters, err = s.q.StatsFailureClusters(ctx, db.StatsFailureClustersParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(),
					Workspace: sc.workspace(), Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since,
					PreviousSince: prev, Until: until, Tag: sc.Tag})
				if err != nil {
					return err
				}
			}
			for _, r := range clusters {
				affected := make([]serverapi.ScenarioRef, 0, len(r.Affected))
				for _, a := range r.Affected {
					affected = append(affected, scenarioRef(a))
				}
				out.FailureClusters = append(out.FailureClusters, serverapi.FailureCluster{Signature: r.Signature, Count: int(r.Count), Scenarios: int(r.Scenarios),
					FirstSeenAt: r.FirstSeenAt.UTC(), LastSeenAt: r.LastSeenAt.UTC(), New: r.IsNew, Example: scenarioRef(r.Example), Affected: affected})
			}
			return nil
		},
		func() error {
			news, err := s.q.StatsNewFailures(ctx, db.StatsNewFailuresParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
				Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, Until: until, Tag: sc.Tag})
			if err != nil {
				return err
			}
			for _, r := range news {
				out.NewFailures = append(out.NewFailures, serverapi.NewFailure{Identity: r.Identity, Project: r.Project, FeaturePath: r.FeaturePath,
					Scenario: r.Scenario, ExampleRow: row(r.ExampleRow), Failures: int(r.Failures), FirstFailedAt: r.FirstFailedAt.UTC(), LastGreenRunId: r.LastGreenRunID})
			}
			return nil
		},
		func() error {
			var err error
			var became []db.StatsBecameFlakyRow
			if roll {
				rows, err := s.q.StatsBecameFlakyRollup(ctx, db.StatsBecameFlakyRollupParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, SinceDay: day(since), UntilDay: day(until), PreviousDay: day(prev)})
				if err != nil {
					return err
				}
				for _, r := range rows {
					became = append(became, db.StatsBecameFlakyRow(r))
				}
			} else {
				became, err = s.q.StatsBecameFlaky(ctx, db.StatsBecameFlakyParams{AllWorkspaces: sc.AllWorkspaces, WorkspaceIds: sc.ids(), Workspace: sc.workspace(),
					Project: sc.Project, Branch: sc.Branch, Environment: sc.Environment, Trigger: sc.Trigger, Since: since, PreviousSince: prev, Until: until, Tag: sc.Tag})
				if err != nil {
					return err
				}
			}
			for _, r := range became {
				out.BecameFlaky = append(out.BecameFlaky, ref(r.Identity, r.Project, r.FeaturePath, r.Scenario, r.ExampleRow))
			}
			return nil
		},
	}
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = part()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// scenarioRef parses a scenario reference as the failure cluster queries join it: project ␟ identity ␟
// feature path ␟ name ␟ example row (empty when the scenario is not an outline row).
func scenarioRef(s string) serverapi.ScenarioRef {
	parts := strings.SplitN(s, "\x1f", 5)
	for len(parts) < 5 {
		parts = append(parts, "")
	}
	ref := serverapi.ScenarioRef{Project: parts[0], Identity: parts[1], FeaturePath: parts[2], Scenario: parts[3]}
	if n, err := strconv.Atoi(parts[4]); err == nil {
		ref.ExampleRow = &n
	}
	return ref
}
