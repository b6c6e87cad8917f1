#include "confdb.h"
#include <stdlib.h>
#include <string.h>

static int setting_load(struct confdb *db, const char *body) {
    struct setting *s = malloc(sizeof *s);
    if (sscanf(body, "%31s %ld", s->name, &s->value) != 2) { free(s); return -1; }
    s->next = db->settings;
    db->settings = s;
    return 0;
}

static int setting_save(struct confdb *db, FILE *out) {
    for (struct setting *s = db->settings; s; s = s->next)
        fprintf(out, "set %s %ld\n", s->name, s->value);
    return 0;
}

static int session_load(struct confdb *db, const char *body) {
    struct session *s = calloc(1, sizeof(struct session));
    sscanf(body, "%u %31s %lf", &s->id, s->user, &s->expires);
    s->next = db->sessions;
    db->sessions = s;
    db->nsessions++;
    return 0;
}

static int session_save(struct confdb *db, FILE *out) {
    for (struct session *s = db->sessions; s; s = s->next)
        fprintf(out, "ses %u %s %f\n", s->id, s->user, s->expires);
    return 0;
}

static int note_load(struct confdb *db, const char *body) {
    unsigned id;
    struct session_note *n = malloc(sizeof *n);
    if (db->nnotes == 64 || sscanf(body, "%u %63[^\n]", &id, n->text) != 2) { free(n); return -1; }
    n->owner = NULL;
    for (struct session *s = db->sessions; s; s = s->next)
        if (s->id == id) n->owner = s;
    db->notes[db->nnotes++] = n;
    return 0;
}

static int note_save(struct confdb *db, FILE *out) {
    for (unsigned i = 0; i < db->nnotes; i++) {
        struct session_note *n = db->notes[i];
        fprintf(out, "not %u %s\n", n->owner ? n->owner->id : 0, n->text);
    }
    return 0;
}

static struct record_ops note_ops = {"not", note_load, note_save};
static struct record_ops setting_ops = {"set", setting_load, setting_save};
static struct record_ops session_ops;

struct record_ops *handlers[8];
int nhandlers;

void register_handlers(void) {
    session_ops.tag = "ses";
    session_ops.load = session_load;
    session_ops.save = session_save;
    handlers[nhandlers++] = &setting_ops;
    handlers[nhandlers++] = &session_ops;
    handlers[nhandlers++] = &note_ops;
}
