/* batch_run.c - `tidepool batch`'s renders: directories, the variants' processes, the
 * contact sheet (batch.h). */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/cli.h"
#include "cli/sheet.h"
#include "util/fsutil.h"
#include "util/progress.h"

extern char **environ;

static int spawn(const batch_opts *o, variant *va, int nv, int threads)
{
	char *args[16 + CLI_MAX_ARGS + 2 * (BATCH_MAX_VARY + BATCH_MAX_OUT)];
	char th[16];
	int n = 0;
	snprintf(th, sizeof th, "%d", threads);
	args[n++] = "tidepool";
	args[n++] = "render";
	args[n++] = (char *)o->scene;
	args[n++] = "-q";
	args[n++] = "--threads";
	args[n++] = th;
	if (o->overwrite)
		args[n++] = "-y";
	/* The scene options as given (--set among them, in order); --threads is batch's. */
	char flags[CLI_MAX_ARGS / 2][24];
	for (int i = 0; i + 1 < o->c.nscene_args; i += 2) {
		if (!strcmp(o->c.scene_args[i], "threads"))
			continue;
		snprintf(flags[i / 2], sizeof flags[0], "--%s", o->c.scene_args[i]);
		args[n++] = flags[i / 2], args[n++] = (char *)o->c.scene_args[i + 1];
	}
	for (int i = 0; i < nv; i++)
		args[n++] = "--set", args[n++] = va->sets[i];
	for (int i = 0; i < va->nouts; i++)
		args[n++] = "-o", args[n++] = va->outs[i];
	args[n] = NULL;
	return posix_spawn(&va->pid, "/proc/self/exe", NULL, NULL, args, environ);
}

/* Directories, up front: an existing variant is only replaced with -y. Everything is
 * checked before anything is created, so a refusal leaves no empty directory. */
int batch_make_dirs(batch_run *r)
{
	const batch_opts *o = r->o;
	char path[4352];
	int rc;
	for (int v = 0; v < r->nvariants; v++) {
		snprintf(path, sizeof path, "%s/%s", o->dir, r->vars[v].name);
		if (tp_path_exists(path) && !o->overwrite)
			return tp_errpath(&r->err, TP_EIO, path, "already exists (use -y to overwrite)");
	}
	if (!o->no_sheet && tp_path_exists(r->sheet_path) && !o->overwrite)
		return tp_errpath(&r->err, TP_EIO, r->sheet_path,
				  "already exists (use -y to overwrite)");
	snprintf(path, sizeof path, "%s/x", o->dir);
	if ((rc = tp_mkdirs_for(path, &r->err)) < 0)
		return rc;
	for (int v = 0; v < r->nvariants; v++) {
		snprintf(path, sizeof path, "%s/%s", o->dir, r->vars[v].name);
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			rc = tp_errpath(&r->err, TP_EIO, path, "cannot create (%s)", strerror(errno));
			while (--v >= 0) { /* the ones made just now, if still empty */
				snprintf(path, sizeof path, "%s/%s", o->dir, r->vars[v].name);
				rmdir(path);
			}
			return rc;
		}
	}
	return 0;
}

/* Runs the variants: `jobs` renders at a time, the cores shared among them. */
int batch_run_variants(batch_run *r)
{
	const batch_opts *o = r->o;
	variant *vars = r->vars;
	const int nvariants = r->nvariants;
	int rc = 0;
	int cores = tp_cli_threads(0);
	int jobs = o->jobs ? o->jobs : cores;
	jobs = jobs > nvariants ? nvariants : jobs;
	/* --threads N: each render's threads; else the cores shared among the jobs */
	int threads = o->c.threads ? o->c.threads : cores / jobs > 0 ? cores / jobs : 1;
	int next = 0, running = 0;
	while ((next < nvariants && !tp_cli_interrupted) || running > 0) {
		while (running < jobs && next < nvariants && !tp_cli_interrupted) {
			int e = spawn(o, &vars[next], r->nv, threads);
			if (e) {
				rc = tp_errf(&r->err, TP_EIO, "cannot start a render (%s)", strerror(e));
				tp_cli_interrupted = 1; /* stop starting more; wait for the rest */
				break;
			}
			running++;
			next++;
		}
		if (!running)
			break;
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0) {
			if (errno == EINTR && tp_cli_interrupted) {
				/* Ctrl-C reaches the renders too; SIGTERM may only have reached us. */
				for (int v = 0; v < next; v++)
					if (vars[v].status < 0 && vars[v].pid > 0)
						kill(vars[v].pid, SIGTERM);
			}
			if (errno == ECHILD)
				break;
			continue;
		}
		for (int v = 0; v < next; v++) {
			if (vars[v].pid != pid || vars[v].status >= 0)
				continue;
			vars[v].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
			running--;
			r->done++;
			if (vars[v].status != 0 && vars[v].status != TP_EXIT_INTR) {
				r->failed++;
				if (!r->first_fail)
					r->first_fail = vars[v].status;
				fprintf(stderr, "tidepool: batch: variant %s failed (exit status %d)\n", vars[v].name,
					vars[v].status);
			}
			if (!o->quiet && vars[v].status == 0)
				fprintf(stderr, "batch: %d/%d %s (%.1f s)\n", r->done, nvariants, vars[v].name,
					tp_now() - r->start);
		}
	}
	return rc;
}

/* The contact sheet of the variants that rendered, the summary, and the status: a failed
 * variant fails the batch (TP_EINPUT when the first failed on its input). */
int batch_finish(batch_run *r, int rc)
{
	const batch_opts *o = r->o;
	const int nvariants = r->nvariants;
	const int interrupted = tp_cli_interrupted && rc == 0;
	if (rc == 0 && !interrupted && !o->no_sheet) {
		const size_t cap = nvariants > 0 ? (size_t)nvariants : 1;
		sheet_item *items = calloc(cap, sizeof *items);
		char(*labels)[512] = calloc(cap, sizeof *labels);
		int n = 0;
		for (int v = 0; items && labels && v < nvariants; v++) {
			const variant *va = &r->vars[v];
			if (va->status != 0)
				continue;
			vary_label(r->vs, r->nv, va->sets, labels[n], sizeof labels[n]);
			items[n].label = labels[n][0] ? labels[n] : va->name;
			items[n].frame = va->preview_frame;
			items[n++].image = va->preview[0] ? va->preview : NULL;
		}
		if (!items || !labels)
			rc = tp_errf(&r->err, TP_EIO, "out of memory");
		else if (n)
			rc = sheet_write(r->sheet_path, items, n, o->thumb, &r->err);
		free(items);
		free(labels);
	}
	if (rc == 0) {
		char summary[4608];
		double el = tp_now() - r->start;
		const int sheet = !o->no_sheet && !interrupted;
		snprintf(summary, sizeof summary, "%s %d of %d variants to %s in %.1f s%s%s%s",
			 interrupted ? "interrupted after" : "rendered", r->done - r->failed, nvariants,
			 o->dir, el, sheet ? " (contact sheet " : "", sheet ? r->sheet_path : "",
			 sheet ? ")" : "");
		if (!o->quiet)
			fprintf(stderr, "%s\n", summary);
	}
	if (rc == 0 && r->failed)
		rc = tp_errf(&r->err, r->first_fail == TP_EXIT_INPUT ? TP_EINPUT : TP_EIO,
			     "batch: %d of %d variants failed", r->failed, nvariants);
	if (rc == 0 && interrupted)
		rc = TP_EINTR;
	return rc;
}
