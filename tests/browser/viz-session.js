// The viz tests' page: the test server's blank page in one Chromium per file, loaded afresh before
// each test, and no console or page problem after it. Returns { session, page } filled in beforeAll.
const { blankPageSession } = require('./harness');

function useBlankPage() {
  const ref = { session: null, page: null, problems: null };
  beforeAll(async () => {
    ref.session = await blankPageSession();
    ref.page = ref.session.page;
    ref.problems = ref.session.problems;
  });
  afterAll(() => ref.session?.close());
  beforeEach(() => ref.page.goto(`${ref.session.server.url}tests/browser/blank.html`));
  afterEach(() => expect(ref.problems).toEqual([]));
  return ref;
}

module.exports = { useBlankPage };
