// moraine from Node.js, as users run it: DuckDB's official v1.4.4 Node
// client (@duckdb/node-api, which loads DuckDB's official libduckdb.so with
// local symbol scope), INSTALL from the private repository, DuckLake on
// moraine on local files. Run by test/storage (TestNodeClient) with
// NODE_PATH pointing at build/official/v1.4.4/node_modules:
//
//   node client.cjs <repository> <ducklake extension> <work dir>
//
// Prints one JSON object of what each step read; the test checks it.
const { DuckDBInstance } = require('@duckdb/node-api');

async function rows(conn, sql) {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRows().map((row) => row.map((v) => (v === null ? null : String(v))));
}

async function main() {
  const [repository, ducklake, work] = process.argv.slice(2);
  const out = {};
  const first = await DuckDBInstance.create(':memory:', { allow_unsigned_extensions: 'true' });
  const a = await first.connect();
  await a.run(`INSTALL moraine FROM '${repository}'`);
  await a.run('LOAD moraine');
  await a.run(`LOAD '${ducklake}'`);
  const attach = `ATTACH 'ducklake:moraine:${work}/lake' AS lake (DATA_PATH '${work}/data/')`;
  await a.run(attach);
  await a.run('CREATE TABLE lake.events (id BIGINT, kind VARCHAR)');
  await a.run("INSERT INTO lake.events VALUES (1, 'signup'), (2, 'login'), (3, 'login')");
  await a.run("INSERT INTO lake.events SELECT i, 'bulk' FROM range(4, 100004) t(i)");
  await a.run("UPDATE lake.events SET kind = 'logout' WHERE id = 3");
  out.counts = await rows(a, 'SELECT kind, count(*), sum(id) FROM lake.events GROUP BY kind ORDER BY kind');
  out.travel = await rows(a, "SELECT count(*) FROM lake.events AT (VERSION => 2) WHERE kind = 'login'");
  out.snapshots = await rows(a, 'SELECT count(*) FROM lake.snapshots()');
  // Detach, then attach again: the lake reads the same.
  await a.run('DETACH lake');
  await a.run(attach);
  out.reattached = await rows(a, 'SELECT count(*) FROM lake.events');
  // A second lake attached beside the first.
  await a.run(`ATTACH 'ducklake:moraine:${work}/lake2' AS lake2 (DATA_PATH '${work}/data2/')`);
  await a.run('CREATE TABLE lake2.t AS SELECT * FROM lake.events WHERE id <= 10');
  out.both = await rows(a, 'SELECT (SELECT count(*) FROM lake.events), (SELECT count(*) FROM lake2.t)');
  // A second database in the same process loads the same extension file:
  // one Go runtime serves both, so it sees the first database's two
  // catalogs.
  const second = await DuckDBInstance.create(':memory:', { allow_unsigned_extensions: 'true' });
  const b = await second.connect();
  await b.run('LOAD moraine');
  out.runtime = await rows(b, 'SELECT catalogs FROM moraine_runtime()');
  await b.run(`ATTACH 'moraine:${work}/lake' AS meta (READ_ONLY)`);
  out.tables = await rows(b, 'SELECT table_name FROM meta.ducklake_table WHERE end_snapshot IS NULL');
  // An error comes back as an error.
  try {
    await b.run("ATTACH 'moraine:/dev/null/nowhere' AS bad");
    out.error = null;
  } catch (e) {
    out.error = String(e.message);
  }
  b.closeSync();
  second.closeSync();
  a.closeSync();
  first.closeSync();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
