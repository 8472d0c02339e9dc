// reads JSON [[path, root, semantics], ...] on stdin; prints results using the real isSameOrInsidePath
import { posix, win32 } from 'path';
const { isSameOrInsidePath } = await import(process.env.OMX_DIST + '/team/scaling.js');
process.chdir('/');
let buf=''; process.stdin.on('data',d=>buf+=d); process.stdin.on('end',()=>{
  const cases = JSON.parse(buf);
  const out = cases.map(([p, r, s]) => {
    const m = s === 'posix' ? posix : win32;
    const sem = { relative: m.relative, isAbsolute: m.isAbsolute, sep: m.sep };
    return { relative: m.relative(r, p), inside: isSameOrInsidePath(p, r, sem) };
  });
  process.stdout.write(JSON.stringify(out));
});
