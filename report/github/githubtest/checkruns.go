package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Run is one check run as the CheckRuns model holds it.
type Run struct {
	ID                                           int64
	Name, HeadSHA, ExternalID, Status            string
	Conclusion, Title, Summary, Text, DetailsURL string
	Annotations                                  int // appended by every write that carries them
	Writes                                       int // creates and updates applied
}

// Fault changes how one request is answered: after waiting Delay (or until the client gives
// up), answer Status; Applied says whether the write was performed first, as when GitHub does
// the work and the answer is lost.
type Fault struct {
	Status  int
	Delay   time.Duration
	Applied bool
}

// CheckRuns models the check runs of one repository: create, update, get, and list for a
// commit. Route its handlers with Fake.On, so every request is still declared and counted.
type CheckRuns struct {
	Owner, Repo string
	mu          sync.Mutex
	runs        []*Run
	faults      map[string]map[int]Fault // by operation ("create", "update"), by its 1-based call
	calls       map[string]int
}

// NewCheckRuns returns an empty model of owner/repo.
func NewCheckRuns(owner, repo string) *CheckRuns {
	return &CheckRuns{Owner: owner, Repo: repo, faults: map[string]map[int]Fault{}, calls: map[string]int{}}
}

// Fail makes the nth call (1-based) of op ("create" or "update") answer with f.
func (c *CheckRuns) Fail(op string, nth int, f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.faults[op] == nil {
		c.faults[op] = map[int]Fault{}
	}
	c.faults[op][nth] = f
}

// Add stores a run as if an earlier process had created it, and returns it.
func (c *CheckRuns) Add(r Run) *Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.ID = int64(len(c.runs) + 1)
	c.runs = append(c.runs, &r)
	return &r
}

// Runs returns a copy of every run, in creation order.
func (c *CheckRuns) Runs() []Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Run, len(c.runs))
	for i, r := range c.runs {
		out[i] = *r
	}
	return out
}

// CreatePath, UpdatePath and ListPath are the routes the handlers answer.
func (c *CheckRuns) CreatePath() string {
	return fmt.Sprintf("/repos/%s/%s/check-runs", c.Owner, c.Repo)
}
func (c *CheckRuns) UpdatePath(id int64) string {
	return fmt.Sprintf("/repos/%s/%s/check-runs/%d", c.Owner, c.Repo, id)
}
func (c *CheckRuns) ListPath(sha string) string {
	return fmt.Sprintf("/repos/%s/%s/commits/%s/check-runs", c.Owner, c.Repo, sha)
}

// fault counts a call of op and returns the fault planned for it, if any.
func (c *CheckRuns) fault(op string) (Fault, bool) {
	c.calls[op]++
	f, ok := c.faults[op][c.calls[op]]
	return f, ok
}

// Create answers POST /repos/{o}/{r}/check-runs.
func (c *CheckRuns) Create(w http.ResponseWriter, r *http.Request, body []byte) {
	c.mu.Lock()
	f, faulty := c.fault("create")
	var run *Run
	if !faulty || f.Applied {
		run = &Run{ID: int64(len(c.runs) + 1), Status: "queued"}
		c.runs = append(c.runs, run)
		c.apply(run, body)
	}
	view := c.view(run)
	c.mu.Unlock()
	if faulty {
		answerFault(w, r, f, http.StatusCreated, view)
		return
	}
	JSON(http.StatusCreated, view)(w, r, body)
}

// Update answers PATCH /repos/{o}/{r}/check-runs/{id}.
func (c *CheckRuns) Update(w http.ResponseWriter, r *http.Request, body []byte) {
	id, _ := strconv.ParseInt(path.Base(r.URL.Path), 10, 64)
	c.mu.Lock()
	run := c.find(id)
	f, faulty := c.fault("update")
	if run != nil && (!faulty || f.Applied) {
		c.apply(run, body)
	}
	view := c.view(run)
	c.mu.Unlock()
	switch {
	case run == nil:
		JSON(http.StatusNotFound, map[string]any{"message": "Not Found"})(w, r, body)
	case faulty:
		answerFault(w, r, f, http.StatusOK, view)
	default:
		JSON(http.StatusOK, view)(w, r, body)
	}
}

// Get answers GET /repos/{o}/{r}/check-runs/{id}.
func (c *CheckRuns) Get(w http.ResponseWriter, r *http.Request, body []byte) {
	id, _ := strconv.ParseInt(path.Base(r.URL.Path), 10, 64)
	c.mu.Lock()
	run := c.find(id)
	view := c.view(run)
	c.mu.Unlock()
	if run == nil {
		JSON(http.StatusNotFound, map[string]any{"message": "Not Found"})(w, r, body)
		return
	}
	JSON(http.StatusOK, view)(w, r, body)
}

// List answers GET /repos/{o}/{r}/commits/{sha}/check-runs with check_name, status, filter
// (latest by default: only the newest run of each name, as GitHub does), per_page and page.
func (c *CheckRuns) List(w http.ResponseWriter, r *http.Request, body []byte) {
	sha := path.Base(path.Dir(r.URL.Path))
	q := r.URL.Query()
	c.mu.Lock()
	var match []map[string]any
	for _, run := range c.selected(sha, q.Get("check_name"), q.Get("status"), q.Get("filter") == "all") {
		match = append(match, c.view(run))
	}
	c.mu.Unlock()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	lo, hi := min((page-1)*per, len(match)), min(page*per, len(match))
	JSON(
		http.StatusOK,
		map[string]any{"total_count": len(match), "check_runs": append([]map[string]any{}, match[lo:hi]...)},
	)(
		w,
		r,
		body,
	)
}

func (c *CheckRuns) selected(sha, name, status string, all bool) []*Run {
	newest := map[string]*Run{}
	var out []*Run
	for _, run := range c.runs {
		if run.HeadSHA != sha || (name != "" && run.Name != name) || (status != "" && run.Status != status) {
			continue
		}
		out = append(out, run)
		newest[run.Name] = run
	}
	if !all {
		out = out[:0]
		for _, run := range newest {
			out = append(out, run)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

func (c *CheckRuns) find(id int64) *Run {
	for _, run := range c.runs {
		if run.ID == id {
			return run
		}
	}
	return nil
}

// apply performs a validated write on run.
func (c *CheckRuns) apply(run *Run, body []byte) {
	var b checkRunBody
	json.Unmarshal(body, &b)
	setIf(&run.Name, b.Name)
	setIf(&run.HeadSHA, b.HeadSHA)
	setIf(&run.ExternalID, b.ExternalID)
	setIf(&run.DetailsURL, b.DetailsURL)
	setIf(&run.Status, b.Status)
	if b.Conclusion != nil {
		run.Conclusion, run.Status = *b.Conclusion, "completed"
	}
	if o := b.Output; o != nil {
		setIf(&run.Title, o.Title)
		setIf(&run.Summary, o.Summary)
		setIf(&run.Text, o.Text)
		run.Annotations += len(o.Annotations)
	}
	run.Writes++
}

func setIf(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func (c *CheckRuns) view(run *Run) map[string]any {
	if run == nil {
		return nil
	}
	v := map[string]any{"id": run.ID, "name": run.Name, "head_sha": run.HeadSHA, "status": run.Status,
		"html_url": fmt.Sprintf("https://github.example.test/%s/%s/runs/%d", c.Owner, c.Repo, run.ID),
		"output":   map[string]any{"title": run.Title, "summary": run.Summary, "annotations_count": run.Annotations}}
	if run.ExternalID != "" {
		v["external_id"] = run.ExternalID
	}
	if run.DetailsURL != "" {
		v["details_url"] = run.DetailsURL
	}
	if run.Conclusion != "" {
		v["conclusion"] = run.Conclusion
	}
	return v
}

// answerFault waits f.Delay (or until the client hangs up), then answers f.Status, or, when
// f.Status is 0, the answer the request would have had (okStatus and view).
func answerFault(w http.ResponseWriter, r *http.Request, f Fault, okStatus int, view any) {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.Status == 0 {
		JSON(okStatus, view)(w, r, nil)
		return
	}
	JSON(f.Status, map[string]any{"message": http.StatusText(f.Status)})(w, r, nil)
}
