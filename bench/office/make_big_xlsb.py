#!/usr/bin/env python3
"""A large binary workbook for timing xlsb reads by hand: Tika's test-columnar.xlsb (from the
corpus) with its sheet rebuilt as ROWS rows of 8 cells (RK, real and inline-string records).

    python3 bench/office/make_big_xlsb.py 100000 big.xlsb
"""
import os, zipfile, struct, sys
def recs(b):
    i=0
    while i<len(b):
        s=i;t=n=0
        for k in range(2):
            x=b[i];i+=1;t|=(x&0x7f)<<(7*k)
            if not x&0x80:break
        for k in range(4):
            x=b[i];i+=1;n|=(x&0x7f)<<(7*k)
            if not x&0x80:break
        yield t,s,i,n;i+=n
def rec(t,p):
    out=bytearray()
    for v,m in ((t,2),(len(p),4)):
        for _ in range(m):
            b=v&0x7f;v>>=7
            if v==0: out.append(b);break
            out.append(b|0x80)
    return bytes(out)+p
src=os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'corpus', 'xlsb', 'test-columnar.xlsb')
z=zipfile.ZipFile(src)
sh=z.read('xl/worksheets/sheet1.bin')
rows=int(sys.argv[1])
pre=post=None; rowhdr=None
for t,s,i,n in recs(sh):
    if t==0x91: pre=sh[:i+n]
    if t==0x92: post=sh[s:]
    if t==0 and rowhdr is None: rowhdr=bytearray(sh[i:i+n])
body=bytearray()
sst_n=1
for r in range(rows):
    h=bytearray(rowhdr); h[0:4]=struct.pack('<I',r); body+=rec(0,bytes(h))
    cells=[]
    body+=rec(2, struct.pack('<III',0,0,((r<<2)|2)&0xffffffff))             # RK int
    body+=rec(5, struct.pack('<IId',1,0,r*1.5))                               # real
    s=('row %d of data'%r).encode('utf-16-le'); body+=rec(6, struct.pack('<III',2,0,len(s)//2)+s)  # inline string
    body+=rec(5, struct.pack('<IId',3,0,r/7.0))
    body+=rec(2, struct.pack('<III',4,0,(((r*3)<<2)|2)&0xffffffff))
    body+=rec(5, struct.pack('<IId',5,0,r*0.25))
    s=('label %d'%(r%97)).encode('utf-16-le'); body+=rec(6, struct.pack('<III',6,0,len(s)//2)+s)
    body+=rec(2, struct.pack('<III',7,0,((r%1000)<<2)|2))
out=zipfile.ZipFile(sys.argv[2],'w',zipfile.ZIP_DEFLATED)
for info in z.infolist():
    d=z.read(info.filename)
    if info.filename=='xl/worksheets/sheet1.bin': d=pre+bytes(body)+post
    out.writestr(info.filename,d)
out.close()
