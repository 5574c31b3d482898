import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";

const t = performance.now();
const db = await PGlite.create({ dataDir: process.argv[2], extensions: { vector } });
const t1 = performance.now();
await db.query("select 1");
await db.close();
const u = process.cpuUsage();
console.log(
  "open ms",
  (t1 - t).toFixed(0),
  "total",
  (performance.now() - t).toFixed(0),
  "cpu user ms",
  (u.user / 1000).toFixed(0),
  "sys",
  (u.system / 1000).toFixed(0),
);
