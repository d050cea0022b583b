package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits GitHub enforces on check runs. The summary and text limits are documented as
// characters; the server counts bytes ("exceeds a maximum bytesize of 65535").
const (
	MaxOutputBytes    = 65535
	MaxAnnotations    = 50
	MaxMessageBytes   = 64 << 10
	MaxAnnotationChar = 255 // annotation title, in characters
)

var (
	createPath        = regexp.MustCompile(`^/repos/[^/]+/[^/]+/check-runs$`)
	updatePath        = regexp.MustCompile(`^/repos/[^/]+/[^/]+/check-runs/[0-9]+$`)
	commentCreatePath = regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/[1-9][0-9]*/comments$`)
	commentUpdatePath = regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/comments/[1-9][0-9]*$`)
	hexSHA            = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// MaxCommentChars is the most characters an issue comment's body may have.
const MaxCommentChars = 65536

var (
	statuses    = set("queued", "in_progress", "completed")
	conclusions = set("action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out")
	levels      = set("notice", "warning", "failure")
)

func set(s ...string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}

// checkRunBody is what the create and update endpoints accept; pointers tell absent from empty.
type checkRunBody struct {
	Name        *string `json:"name"`
	HeadSHA     *string `json:"head_sha"`
	ExternalID  *string `json:"external_id"`
	DetailsURL  *string `json:"details_url"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title       *string      `json:"title"`
		Summary     *string      `json:"summary"`
		Text        *string      `json:"text"`
		Annotations []annotation `json:"annotations"`
	} `json:"output"`
}

type annotation struct {
	Path            *string `json:"path"`
	StartLine       *int    `json:"start_line"`
	EndLine         *int    `json:"end_line"`
	StartColumn     *int    `json:"start_column"`
	EndColumn       *int    `json:"end_column"`
	AnnotationLevel *string `json:"annotation_level"`
	Message         *string `json:"message"`
	Title           *string `json:"title"`
	RawDetails      *string `json:"raw_details"`
}

// Validate checks a check-run create (POST .../check-runs) or update (PATCH
// .../check-runs/{id}), or an issue comment's create (POST .../issues/{n}/comments) or update
// (PATCH .../issues/comments/{id}), the way GitHub does, and returns what GitHub's 422 would
// say, or "" when the request is valid or is none of these writes.
func Validate(method, path string, body []byte) string {
	if method == http.MethodPost && commentCreatePath.MatchString(path) ||
		method == http.MethodPatch && commentUpdatePath.MatchString(path) {
		return validateComment(body)
	}
	create := method == http.MethodPost && createPath.MatchString(path)
	if !create && !(method == http.MethodPatch && updatePath.MatchString(path)) {
		return ""
	}
	var b checkRunBody
	if err := json.Unmarshal(body, &b); err != nil {
		return "Problems parsing JSON"
	}
	for _, check := range []func(checkRunBody, bool) string{checkRequired, checkEnums, checkTimes, checkOutput} {
		if msg := check(b, create); msg != "" {
			return msg
		}
	}
	return ""
}

func checkRequired(b checkRunBody, create bool) string {
	if create && (b.Name == nil || *b.Name == "") {
		return `"name" wasn't supplied.`
	}
	if create && (b.HeadSHA == nil || !hexSHA.MatchString(*b.HeadSHA)) {
		return `"head_sha" wasn't supplied or is not a commit SHA.`
	}
	return ""
}

func checkEnums(b checkRunBody, _ bool) string {
	if b.Status != nil && !statuses[*b.Status] {
		return fmt.Sprintf(
			"For 'properties/status', %q is not a member of [queued, in_progress, completed].",
			*b.Status,
		)
	}
	if b.Conclusion != nil && !conclusions[*b.Conclusion] {
		return fmt.Sprintf("For 'properties/conclusion', %q is not a valid conclusion.", *b.Conclusion)
	}
	if b.Conclusion == nil && ((b.Status != nil && *b.Status == "completed") || b.CompletedAt != nil) {
		return `"conclusion" is required when "status" is "completed" or "completed_at" is given.`
	}
	return ""
}

func checkTimes(b checkRunBody, _ bool) string {
	for name, v := range map[string]*string{"started_at": b.StartedAt, "completed_at": b.CompletedAt} {
		if v == nil {
			continue
		}
		if _, err := time.Parse(time.RFC3339, *v); err != nil {
			return fmt.Sprintf("For 'properties/%s', %q is not an ISO 8601 timestamp.", name, *v)
		}
	}
	return ""
}

func checkOutput(b checkRunBody, _ bool) string {
	o := b.Output
	if o == nil {
		return ""
	}
	if o.Title == nil || o.Summary == nil {
		return `output "title" and "summary" are required.`
	}
	for name, v := range map[string]*string{"summary": o.Summary, "text": o.Text} {
		if v != nil && len(*v) > MaxOutputBytes {
			return fmt.Sprintf(
				"Invalid request.\n\nOnly %d bytes are allowed; output.%s exceeds a maximum bytesize of %d (it has %d).",
				MaxOutputBytes,
				name,
				MaxOutputBytes,
				len(*v),
			)
		}
	}
	if len(o.Annotations) > MaxAnnotations {
		return fmt.Sprintf(
			"Invalid request.\n\nOnly %d annotations are allowed per request; got %d.",
			MaxAnnotations,
			len(o.Annotations),
		)
	}
	for i, a := range o.Annotations {
		if msg := a.check(); msg != "" {
			return fmt.Sprintf("output.annotations[%d]: %s", i, msg)
		}
	}
	return ""
}

func (a annotation) check() string {
	switch {
	case a.Path == nil || *a.Path == "",
		a.StartLine == nil,
		a.EndLine == nil,
		a.AnnotationLevel == nil,
		a.Message == nil:
		return "path, start_line, end_line, annotation_level and message are required"
	case !levels[*a.AnnotationLevel]:
		return fmt.Sprintf("annotation_level %q is not notice, warning or failure", *a.AnnotationLevel)
	case *a.StartLine < 1 || *a.EndLine < *a.StartLine:
		return fmt.Sprintf("start_line %d and end_line %d are not a range of lines", *a.StartLine, *a.EndLine)
	case (a.StartColumn != nil || a.EndColumn != nil) && *a.StartLine != *a.EndLine:
		return "start_column and end_column are only allowed when start_line equals end_line"
	case len(*a.Message) > MaxMessageBytes:
		return fmt.Sprintf("message exceeds %d bytes", MaxMessageBytes)
	case a.RawDetails != nil && len(*a.RawDetails) > MaxMessageBytes:
		return fmt.Sprintf("raw_details exceeds %d bytes", MaxMessageBytes)
	case a.Title != nil && utf8.RuneCountInString(*a.Title) > MaxAnnotationChar:
		return fmt.Sprintf("title exceeds %d characters", MaxAnnotationChar)
	}
	return ""
}

// validateComment checks an issue comment's body as GitHub does: a JSON object whose "body"
// is a non-blank string of at most 65,536 characters.
func validateComment(body []byte) string {
	var b struct {
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return "Problems parsing JSON"
	}
	switch {
	case b.Body == nil:
		return `Invalid request.

"body" wasn't supplied.`
	case strings.TrimSpace(*b.Body) == "":
		return "Validation Failed: body cannot be blank"
	case utf8.RuneCountInString(*b.Body) > MaxCommentChars:
		return fmt.Sprintf("Validation Failed: body is too long (maximum is %d characters)", MaxCommentChars)
	}
	return ""
}
