package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"sync"
)

// BotLogin is the author of the comments Comments creates, as GITHUB_TOKEN writes them.
const BotLogin = "github-actions[bot]"

// Comment is one issue comment as the Comments model holds it.
type Comment struct {
	ID          int64
	PR          int
	Body        string
	Login, Type string // the author: Type is "Bot" or "User"
	Writes      int    // the create, then one per update
}

// Comments models the issue comments of one repository's pull requests: list, create and
// update, as GitHub answers them. Updating a comment another author wrote is refused (403),
// as it is for an installation token. Route its handlers with Fake.On, so every request is
// still declared and counted.
type Comments struct {
	Owner, Repo string
	mu          sync.Mutex
	comments    []*Comment
}

// NewComments returns an empty model of owner/repo.
func NewComments(owner, repo string) *Comments { return &Comments{Owner: owner, Repo: repo} }

// ListPath, CreatePath and UpdatePath are the routes the handlers answer.
func (c *Comments) ListPath(pr int) string {
	return fmt.Sprintf("/repos/%s/%s/issues/%d/comments", c.Owner, c.Repo, pr)
}
func (c *Comments) CreatePath(pr int) string { return c.ListPath(pr) }
func (c *Comments) UpdatePath(id int64) string {
	return fmt.Sprintf("/repos/%s/%s/issues/comments/%d", c.Owner, c.Repo, id)
}

// Add stores a comment as if someone had written it before, and returns it.
func (c *Comments) Add(cm Comment) *Comment {
	c.mu.Lock()
	defer c.mu.Unlock()
	cm.ID = int64(len(c.comments) + 1)
	c.comments = append(c.comments, &cm)
	return &cm
}

// All returns a copy of every comment, in creation order.
func (c *Comments) All() []Comment {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Comment, len(c.comments))
	for i, cm := range c.comments {
		out[i] = *cm
	}
	return out
}

func prOf(p string) int {
	n, _ := strconv.Atoi(path.Base(path.Dir(p)))
	return n
}

// List answers GET /repos/{o}/{r}/issues/{n}/comments with per_page (at most 100) and page,
// oldest first.
func (c *Comments) List(w http.ResponseWriter, r *http.Request, body []byte) {
	pr := prOf(r.URL.Path)
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	c.mu.Lock()
	var match []map[string]any
	for _, cm := range c.comments {
		if cm.PR == pr {
			match = append(match, c.view(cm))
		}
	}
	c.mu.Unlock()
	lo, hi := min((page-1)*per, len(match)), min(page*per, len(match))
	JSON(http.StatusOK, append([]map[string]any{}, match[lo:hi]...))(w, r, body)
}

// Create answers POST /repos/{o}/{r}/issues/{n}/comments (validated by the Fake first).
func (c *Comments) Create(w http.ResponseWriter, r *http.Request, body []byte) {
	var b struct{ Body string }
	json.Unmarshal(body, &b)
	c.mu.Lock()
	cm := &Comment{ID: int64(len(c.comments) + 1), PR: prOf(r.URL.Path), Body: b.Body, Login: BotLogin, Type: "Bot",
		Writes: 1}
	c.comments = append(c.comments, cm)
	view := c.view(cm)
	c.mu.Unlock()
	JSON(http.StatusCreated, view)(w, r, body)
}

// Update answers PATCH /repos/{o}/{r}/issues/comments/{id} (validated by the Fake first).
func (c *Comments) Update(w http.ResponseWriter, r *http.Request, body []byte) {
	id, _ := strconv.ParseInt(path.Base(r.URL.Path), 10, 64)
	var b struct{ Body string }
	json.Unmarshal(body, &b)
	c.mu.Lock()
	var cm *Comment
	for _, x := range c.comments {
		if x.ID == id {
			cm = x
		}
	}
	var view map[string]any
	if cm != nil && cm.Login == BotLogin {
		cm.Body = b.Body
		cm.Writes++
		view = c.view(cm)
	}
	c.mu.Unlock()
	switch {
	case cm == nil:
		JSON(http.StatusNotFound, map[string]any{"message": "Not Found"})(w, r, body)
	case view == nil:
		JSON(http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration"})(w, r, body)
	default:
		JSON(http.StatusOK, view)(w, r, body)
	}
}

func (c *Comments) view(cm *Comment) map[string]any {
	return map[string]any{"id": cm.ID, "body": cm.Body, "user": map[string]any{"login": cm.Login, "type": cm.Type},
		"html_url": fmt.Sprintf("https://github.example.test/%s/%s/pull/%d#issuecomment-%d", c.Owner, c.Repo, cm.PR,
			cm.ID)}
}
