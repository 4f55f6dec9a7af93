"""Reads a JUnit XML file with junitparser (python3-junitparser, as CI tools read it) and
prints one line per suite, then one per test case:
    suite NAME tests=N failures=N errors=N skipped=N time=SECONDS timestamp=ISO
    case NAME RESULT MESSAGE          (RESULT: passed, failure, error or skipped)
Exit status 1 (with a message) if the file does not parse or lacks time or timestamp."""
import datetime
import sys

from junitparser import Error, Failure, JUnitXml, Skipped

xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if xml._tag == "testsuite" else list(xml)
for s in suites:
    if s.time is None or s.timestamp is None:
        sys.exit("missing time or timestamp on suite %r" % s.name)
    datetime.datetime.fromisoformat(s.timestamp)
    print("suite %s tests=%d failures=%d errors=%d skipped=%d time=%g timestamp=%s"
          % (s.name, s.tests, s.failures, s.errors, s.skipped, s.time, s.timestamp))
    for c in s:
        kind = "passed"
        msg = ""
        for r in c.result:
            kind = {Failure: "failure", Error: "error", Skipped: "skipped"}.get(type(r), "other")
            msg = r.message or ""
        print("case %s %s %s" % (c.name, kind, msg))
