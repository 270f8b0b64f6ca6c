-- The user actions whose metadata SQL tools/ducklakesql captures for
-- DuckLake 1.0 (DuckDB v1.5.5): the actions of DuckLake 0.3's contract
-- (../shared/ducklake/metadata-sql-contract.txt), then what 1.0 adds
-- (macros, sort keys, VARIANT columns, defaults), then the migration of a
-- lake DuckLake 0.3 (DuckDB v1.4.4) wrote.

-- before build/duckdb-official-v1.4.4 ../shared/ducklake/v1.4.4/ducklake.duckdb_extension
ATTACH 'ducklake:{dir}/old.duckdb' AS old (DATA_PATH '{dir}/olddata/', DATA_INLINING_ROW_LIMIT 10);
CREATE TABLE old.t (id INTEGER, name VARCHAR);
INSERT INTO old.t VALUES (1, 'a'), (2, 'b');
INSERT INTO old.t SELECT i, 'x' || i FROM range(100, 120) r(i);
DELETE FROM old.t WHERE id = 105;
CREATE VIEW old.v AS SELECT id FROM old.t;
-- end before

-- action: ATTACH (new lake, init metadata)
ATTACH 'ducklake:{dir}/meta.duckdb' AS lake (DATA_PATH '{dir}/data/');
-- action: CREATE SCHEMA
CREATE SCHEMA lake.s1;
-- action: CREATE TABLE
CREATE TABLE lake.s1.t (id INTEGER, name VARCHAR);
-- action: INSERT 3 rows (inlined: 1.0 inlines small inserts by default)
INSERT INTO lake.s1.t VALUES (1, 'a'), (2, 'b'), (3, 'c');
-- action: SELECT
SELECT * FROM lake.s1.t ORDER BY id;
-- action: set_option data_inlining_row_limit 10
CALL lake.set_option('data_inlining_row_limit', 10);
-- action: INSERT 2 rows (inlined)
INSERT INTO lake.s1.t VALUES (4, 'd'), (5, 'e');
-- action: INSERT 100 rows (Parquet)
INSERT INTO lake.s1.t SELECT i, 'x' || i FROM range(100, 200) r(i);
-- action: SELECT with filter
SELECT * FROM lake.s1.t WHERE id = 150;
-- action: UPDATE inlined row
UPDATE lake.s1.t SET name = 'B' WHERE id = 4;
-- action: UPDATE Parquet row
UPDATE lake.s1.t SET name = 'X150' WHERE id = 150;
-- action: DELETE
DELETE FROM lake.s1.t WHERE id = 3 OR id = 199;
-- action: ALTER TABLE ADD COLUMN with a default
ALTER TABLE lake.s1.t ADD COLUMN score DOUBLE DEFAULT 1.5;
-- action: INSERT after ALTER
INSERT INTO lake.s1.t (id, name) VALUES (6, 'f');
-- action: ALTER TABLE RENAME COLUMN
ALTER TABLE lake.s1.t RENAME COLUMN score TO points;
-- action: ALTER TABLE DROP COLUMN
ALTER TABLE lake.s1.t DROP COLUMN points;
-- action: ducklake_snapshots
SELECT snapshot_id, changes::VARCHAR AS changes FROM ducklake_snapshots('lake');
-- action: time travel
SELECT count(*) FROM lake.s1.t AT (VERSION => 4);
-- action: ducklake_table_info
SELECT table_name, file_count FROM ducklake_table_info('lake');
-- action: CREATE TABLE AS
CREATE TABLE lake.s1.tmp AS SELECT 1 AS x;
-- action: DROP TABLE
DROP TABLE lake.s1.tmp;
-- action: CREATE MACRO (scalar)
CREATE MACRO lake.s1.add_one(a, b := 1) AS a + b;
-- action: CREATE MACRO (table)
CREATE MACRO lake.s1.small(n) AS TABLE SELECT * FROM lake.s1.t WHERE id < n;
-- action: use the macros
SELECT lake.s1.add_one(41) AS v, (SELECT count(*) FROM lake.s1.small(10)) AS n;
-- action: DROP MACRO
DROP MACRO lake.s1.add_one;
-- action: SET SORTED BY
ALTER TABLE lake.s1.t SET SORTED BY (id ASC, name DESC NULLS FIRST);
-- action: INSERT into the sorted table
INSERT INTO lake.s1.t SELECT i, 'y' || i FROM range(300, 320) r(i);
-- action: RESET SORTED BY
ALTER TABLE lake.s1.t RESET SORTED BY;
-- action: CREATE TABLE with VARIANT
CREATE TABLE lake.s1.var (id INTEGER, v VARIANT);
-- action: INSERT VARIANT (Parquet)
INSERT INTO lake.s1.var SELECT i, {'a': i, 'b': 'x' || i}::VARIANT FROM range(20) r(i);
-- action: INSERT VARIANT (inlined)
INSERT INTO lake.s1.var VALUES (100, 42::VARIANT);
-- action: SELECT VARIANT with a filter
SELECT count(*) FROM lake.s1.var WHERE v.a = 7;
-- action: set_partitioned_by
ALTER TABLE lake.s1.var SET PARTITIONED BY (id);
-- action: explicit transaction: BEGIN
BEGIN;
-- action: txn INSERT
INSERT INTO lake.s1.t VALUES (7, 'g');
-- action: txn CREATE TABLE
CREATE TABLE lake.s1.t2 (k BIGINT);
-- action: txn COMMIT
COMMIT;
-- action: ducklake_table_changes
FROM ducklake_table_changes('lake', 's1', 't', 3, 5) ORDER BY ALL;
-- action: COMMENT ON TABLE
COMMENT ON TABLE lake.s1.t IS 'demo table';
-- action: COMMENT ON COLUMN
COMMENT ON COLUMN lake.s1.t.id IS 'the id';
-- action: CREATE VIEW
CREATE VIEW lake.s1.v AS SELECT id FROM lake.s1.t;
-- action: flush inlined data
CALL ducklake_flush_inlined_data('lake');
-- action: merge_adjacent_files
CALL ducklake_merge_adjacent_files('lake');
-- action: expire_snapshots
SELECT count(*) FROM ducklake_expire_snapshots('lake', versions => [1, 2, 3]);
-- action: cleanup_old_files
CALL ducklake_cleanup_old_files('lake', cleanup_all => true);
-- action: DETACH
DETACH lake;
-- action: re-ATTACH the lake
ATTACH 'ducklake:{dir}/meta.duckdb' AS lake (DATA_PATH '{dir}/data/');
-- action: SELECT after re-attach
SELECT count(*) FROM lake.s1.t;
-- action: ATTACH a DuckLake 0.3 lake (migration to 1.0)
ATTACH 'ducklake:{dir}/old.duckdb' AS old (DATA_PATH '{dir}/olddata/', AUTOMATIC_MIGRATION TRUE);
-- action: SELECT after the migration
SELECT count(*), sum(id) FROM old.t;
-- action: INSERT after the migration
INSERT INTO old.t VALUES (3, 'c');
