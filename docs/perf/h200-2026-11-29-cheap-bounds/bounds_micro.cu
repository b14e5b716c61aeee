// bounds_micro.cu (forty-fifth session): the per-bucket loops of a top-p plan's bounds, written out
// standalone to count their SASS on sm_90 (not a test, not built by the project). Compiled with nvcc 11.8:
//   nvcc -ccbin g++-11 -gencode arch=compute_90,code=sm_90 -O3 -c bounds_micro.cu; cuobjdump -sass
// and the instructions between each loop's head and its backward branch counted ('unroll 1').
// kup/klo: the bounds before (BucketMap::upper/lower with a division in double, exp in double);
// kup2/klo2: the edges taken once (BucketEdges) and exp in float; kup3: the edges once, exp in double;
// kup4/klo4: the landed form (WeightBounds); kf: both bounds in one loop (not used).
// Loop bodies (general path): kup 152, klo 131; kup3 119; kup2 74, klo2 54; kup4 70, klo4 50; kf 121.
#include <cstdint>
typedef unsigned long long W;
struct Map { float lo,t,inv_w; int nb;
 __device__ double lower(int b) const { if (b<=0) return -1e300; if (inv_w==0.0f) return double(lo)-slack();
   return double(lo)+(double(b-1)-0.01)/double(inv_w)-slack(); }
 __device__ double upper(int b) const { if (b<=0) return double(lo)+slack(); if (inv_w==0.0f||b>=nb-1) return double(t);
   const double u=double(lo)+(double(b)+0.01)/double(inv_w)+slack(); return u<double(t)?u:double(t);}
 __device__ double slack() const { double a=double(lo)<0?-double(lo):double(lo); double b=double(t)<0?-double(t):double(t); return 1e-5*(a+b+1e-30);} };
__device__ W wceil(double x){ if(!(x>0.0)) return 0; if (x>=0x1p63) return W(1)<<63; W w=(W)x; return double(w)<x?w+1:w;}
extern "C" __global__ void kup(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0;
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ W w=wceil(double(c)*exp((map.upper(b)-M)*I)*S*(1.0+rel)); W most=W(c)*W(S); v=w<most?w:most;}
    sum+=v;}
  out[threadIdx.x]=sum;}
extern "C" __global__ void klo(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0;
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ double w=exp((map.lower(b)-M)*I)*S*(1.0-rel)-1.0; if(w>0.0){ W l=(W)(w<S?w:S); v=W(c)*l;}}
    sum+=v;}
  out[threadIdx.x]=sum;}
struct Edges { double lo,t,w,sl; int nb; bool flat;
 __device__ double upper(int b) const { if (b<=0) return lo+sl; if (flat||b>=nb-1) return t; const double u=fma(double(b)+0.01,w,lo+sl); return u<t?u:t;}
 __device__ double lower(int b) const { if (b<=0) return -1e300; if (flat) return lo-sl; return fma(double(b-1)-0.01,w,lo-sl);} };
extern "C" __global__ void kup2(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0;
  Edges e{map.lo,map.t,map.inv_w==0.0f?0.0:1.0/double(map.inv_w),map.slack(),map.nb,map.inv_w==0.0f};
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ W w=wceil(double(c)*double(expf(float((e.upper(b)-M)*I)))*S*(1.0+rel)); W most=W(c)*W(S); v=w<most?w:most;}
    sum+=v;}
  out[threadIdx.x]=sum;}
extern "C" __global__ void klo2(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0;
  Edges e{map.lo,map.t,map.inv_w==0.0f?0.0:1.0/double(map.inv_w),map.slack(),map.nb,map.inv_w==0.0f};
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ double w=double(expf(float((e.lower(b)-M)*I)))*S*(1.0-rel)-1.0; if(w>0.0){ W l=(W)(w<S?w:S); v=W(c)*l;}}
    sum+=v;}
  out[threadIdx.x]=sum;}
extern "C" __global__ void kup3(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0;
  Edges e{map.lo,map.t,map.inv_w==0.0f?0.0:1.0/double(map.inv_w),map.slack(),map.nb,map.inv_w==0.0f};
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ W w=wceil(double(c)*exp((e.upper(b)-M)*I)*S*(1.0+rel)); W most=W(c)*W(S); v=w<most?w:most;}
    sum+=v;}
  out[threadIdx.x]=sum;}
extern "C" __global__ void kf(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sa=0,sb=0;
  Edges e{map.lo,map.t,map.inv_w==0.0f?0.0:1.0/double(map.inv_w),map.slack(),map.nb,map.inv_w==0.0f};
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W va=0,vb=0;
    if(c){ W w=wceil(double(c)*double(expf(float((e.upper(b)-M)*I)))*S*(1.0+rel)); W most=W(c)*W(S); va=w<most?w:most;
     double w2=double(expf(float((e.lower(b)-M)*I)))*S*(1.0-rel)-1.0; if(w2>0.0){ W l=(W)(w2<S?w2:S); vb=W(c)*l;}}
    sa+=va; sb+=vb;}
  out[threadIdx.x]=sa; out[threadIdx.x+1]=sb;}
extern "C" __global__ void kup4(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0; const double up=S*(1.0+rel); const W full=W(S);
  Edges e{map.lo,map.t,map.inv_w==0.0f?0.0:1.0/double(map.inv_w),map.slack(),map.nb,map.inv_w==0.0f};
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ W w=wceil(double(c)*double(expf(float((e.upper(b)-M)*I)))*up); W most=W(c)*full; v=w<most?w:most;}
    sum+=v;}
  out[threadIdx.x]=sum;}
extern "C" __global__ void klo4(const unsigned* hist, Map map, float max, float scale, float inv_t, int first, int last, W* out){
  const double M=max,S=scale,I=inv_t; constexpr double rel=1e-4; W sum=0; const double down=S*(1.0-rel);
  Edges e{map.lo,map.t,map.inv_w==0.0f?0.0:1.0/double(map.inv_w),map.slack(),map.nb,map.inv_w==0.0f};
  _Pragma("unroll 1") for(int i=first;i<last;++i){ int b=map.nb-1-i; unsigned c=hist[b]; W v=0;
    if(c){ double w=double(expf(float((e.lower(b)-M)*I)))*down-1.0; if(w>0.0){ W l=(W)(w<S?w:S); v=W(c)*l;}}
    sum+=v;}
  out[threadIdx.x]=sum;}
