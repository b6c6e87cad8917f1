/* confdb: a settings and session database whose loader dispatches each
 * record of its save file through a table of callbacks. NVMOVE stops at the
 * indirect call; cairn follows it. Test program for cairn analyze; the
 * persistent types are listed in tests/analyzer/test_analyze.py. */
#ifndef CONFDB_H
#define CONFDB_H
#include <stdio.h>

struct confdb;

struct record_ops {              /* a table of handlers: not state */
    const char *tag;
    int (*load)(struct confdb *db, const char *body);
    int (*save)(struct confdb *db, FILE *out);
};

struct setting {                 /* persistent */
    char name[32];
    long value;
    struct setting *next;
};

struct session {                 /* persistent */
    unsigned id;
    char user[32];
    double expires;
    struct session *next;
};

/* A note on a session, kept in an untyped array (void *), as Redis keeps
 * its values behind robj->ptr. */
struct session_note {            /* persistent */
    struct session *owner;
    char text[64];
};

struct confdb {                  /* persistent: the root */
    struct setting *settings;
    struct session *sessions;
    unsigned nsessions;
    void *notes[64];
    unsigned nnotes;
};

struct line_reader {             /* iterator over the save file */
    FILE *in;
    struct confdb *db;
    unsigned lineno;
};

struct parse_scratch {           /* scratch space, only a local */
    char tag[16];
    char body[240];
};

int confdb_load(struct confdb *db, const char *path);
int confdb_save(struct confdb *db, const char *path);
void register_handlers(void);
extern struct record_ops *handlers[8];
extern int nhandlers;
#endif
